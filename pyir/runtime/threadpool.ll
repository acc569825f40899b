; pyir's persistent thread pool for parallel loops (Linux, pthreads, futex).
;
; Exported:
;   i32 @pyir_parallel_for(ptr %fn, ptr %closure, i64 %n)
;       %fn is `i32 (i64 begin, i64 end, ptr closure)`. [0, n) is cut into at most
;       num_threads balanced contiguous parts, the later ones one iteration longer when
;       they cannot be equal (a split loop's last iteration is its partial tile: the 147
;       tiles of 7 rows for n = 1024 on two threads are 73 and 73 + 2/7 tiles of work,
;       not 74 and 72 + 2/7). The caller runs part 0, worker k part k, each in steps of
;       an eighth of it, and a thread that finished its part takes the steps left in the
;       others (see @tp_run). Returns 0 or the first nonzero status a
;       step returned. n <= 0 calls nothing; n == 1 calls fn inline.
;   i32 @pyir_num_threads()
;       Threads a launch uses (the caller included).
;
; Workers are created on the first launch that needs them and then live for the process
; (a forked child builds its own pool on its first launch).
; A launch publishes its job, bumps the generation counter @tp_gen and wakes sleepers;
; every worker handles every generation exactly once (chunk or not) and then decrements
; @tp_pending, so the job globals are never reread by a worker of an older launch.
; Waiters spin (see @tp_backoff), then sleep on a futex: an idle process uses no CPU.
; Only one launch owns the pool (@tp_busy); a launch from inside a chunk or from another
; thread while the pool is owned runs serially inline, so nothing can deadlock.
;
; The Python loader prepends the target triple and appends @tp_relax (the spin hint) and
; @tp_sys_futex (the futex syscall number) for the target architecture.

@tp_gen = internal global i32 0, align 64
@tp_sleepers = internal global i32 0, align 64
@tp_pending = internal global i32 0, align 64
@tp_caller_waiting = internal global i32 0, align 64
@tp_busy = internal global i32 0, align 64
@tp_status = internal global i32 0, align 64
@tp_fn = internal global ptr null, align 64
@tp_closure = internal global ptr null, align 8
@tp_n = internal global i64 0, align 8
@tp_chunks = internal global i64 0, align 8
; Per part, the offset of its next step (one cache line each; reset by every launch).
@tp_next = internal global [1024 x [8 x i64]] zeroinitializer, align 64
@tp_ready = internal global i32 0, align 64
@tp_workers = internal global i32 0, align 4
@tp_init_gen = internal global i32 0, align 4
@tp_atfork_registered = internal global i32 0, align 4
@tp_pause_rounds = internal global i32 0, align 4
@tp_pause_rounds_normal = internal constant i32 16
@tp_yield_rounds = internal constant i32 256
@tp_max_threads = internal constant i64 1024
@tp_env_name = private unnamed_addr constant [17 x i8] c"PYIR_NUM_THREADS\00"

declare ptr @getenv(ptr)
declare i64 @strtol(ptr, ptr, i32)
declare i32 @sched_getaffinity(i32, i64, ptr)
declare i64 @sysconf(i32)
declare i64 @syscall(i64, ...)
declare i32 @pthread_create(ptr, ptr, ptr, ptr)
declare i32 @pthread_sigmask(i32, ptr, ptr)
declare i32 @sigfillset(ptr)
declare i32 @sched_yield()
declare i32 @__register_atfork(ptr, ptr, ptr, ptr)
declare i64 @llvm.umin.i64(i64, i64)
declare i64 @llvm.smin.i64(i64, i64)
declare <16 x i64> @llvm.ctpop.v16i64(<16 x i64>)
declare i64 @llvm.vector.reduce.add.v16i64(<16 x i64>)

define i32 @pyir_parallel_for(ptr %fn, ptr %closure, i64 %n) {
entry:
  %multi = icmp sgt i64 %n, 1
  br i1 %multi, label %claim, label %small

small:
  %any = icmp sgt i64 %n, 0
  br i1 %any, label %serial, label %nothing

nothing:
  ret i32 0

claim:
  %pair = cmpxchg ptr @tp_busy, i32 0, i32 1 acquire monotonic
  %owned = extractvalue { i32, i1 } %pair, 1
  br i1 %owned, label %check_pool, label %serial

serial:
  %inline_status = call i32 %fn(i64 0, i64 %n, ptr %closure)
  ret i32 %inline_status

check_pool:
  %ready = load atomic i32, ptr @tp_ready monotonic, align 4
  %has_pool = icmp ne i32 %ready, 0
  br i1 %has_pool, label %have_pool, label %create_pool

create_pool:
  call void @tp_init()
  br label %have_pool

have_pool:
  %workers32 = load atomic i32, ptr @tp_workers monotonic, align 4
  %no_workers = icmp eq i32 %workers32, 0
  br i1 %no_workers, label %release_serial, label %launch

release_serial:
  store atomic i32 0, ptr @tp_busy release, align 4
  br label %serial

launch:
  %workers = zext i32 %workers32 to i64
  %threads = add i64 %workers, 1
  %chunks = call i64 @llvm.umin.i64(i64 %threads, i64 %n)
  store ptr %fn, ptr @tp_fn, align 8
  store ptr %closure, ptr @tp_closure, align 8
  store i64 %n, ptr @tp_n, align 8
  store i64 %chunks, ptr @tp_chunks, align 8
  br label %reset

reset:
  %part = phi i64 [ 0, %launch ], [ %next_part, %reset ]
  %counter = getelementptr [1024 x [8 x i64]], ptr @tp_next, i64 0, i64 %part, i64 0
  store atomic i64 0, ptr %counter monotonic, align 8
  %next_part = add i64 %part, 1
  %more_parts = icmp ult i64 %next_part, %chunks
  br i1 %more_parts, label %reset, label %publish

publish:
  store atomic i32 0, ptr @tp_status monotonic, align 4
  store atomic i32 %workers32, ptr @tp_pending monotonic, align 4
  %old_gen = atomicrmw add ptr @tp_gen, i32 1 seq_cst
  %sleepers = load atomic i32, ptr @tp_sleepers seq_cst, align 4
  %someone_sleeps = icmp ne i32 %sleepers, 0
  br i1 %someone_sleeps, label %wake, label %work

wake:
  call void @tp_futex_wake(ptr @tp_gen, i64 2147483647)
  br label %work

work:
  call void @tp_run(i64 0)
  call void @tp_await_workers()
  %status = load atomic i32, ptr @tp_status monotonic, align 4
  store atomic i32 0, ptr @tp_busy release, align 4
  ret i32 %status
}

define i32 @pyir_num_threads() {
entry:
  %ready = load atomic i32, ptr @tp_ready acquire, align 4
  %has_pool = icmp ne i32 %ready, 0
  br i1 %has_pool, label %pool, label %configured

pool:
  %workers = load atomic i32, ptr @tp_workers monotonic, align 4
  %threads = add i32 %workers, 1
  ret i32 %threads

configured:
  %count = call i64 @tp_thread_count()
  %count32 = trunc i64 %count to i32
  ret i32 %count32
}

; Runs the published job's part %self, then the steps left in the other parts (%self + 1,
; %self + 2, ... around): a thread the system holds up delays the launch by one step, not
; by its whole part, and with no hold-up every thread runs just its own part, in order.
define internal void @tp_run(i64 %self) {
entry:
  %chunks = load i64, ptr @tp_chunks, align 8
  %has_part = icmp ult i64 %self, %chunks
  br i1 %has_part, label %visit, label %done

visit:
  %k = phi i64 [ 0, %entry ], [ %next_k, %visit ]
  %j = add i64 %self, %k
  %wraps = icmp uge i64 %j, %chunks
  %j_wrapped = sub i64 %j, %chunks
  %part = select i1 %wraps, i64 %j_wrapped, i64 %j
  call void @tp_run_part(i64 %part)
  %next_k = add i64 %k, 1
  %more = icmp ult i64 %next_k, %chunks
  br i1 %more, label %visit, label %done

done:
  ret void
}

; Runs steps of part %i until none is left: each claims the next eighth of the part (at
; least one iteration) through the part's counter in @tp_next.
define internal void @tp_run_part(i64 %i) {
entry:
  %n = load i64, ptr @tp_n, align 8
  %chunks = load i64, ptr @tp_chunks, align 8
  %fn = load ptr, ptr @tp_fn, align 8
  %closure = load ptr, ptr @tp_closure, align 8
  %size = udiv i64 %n, %chunks
  %rest = urem i64 %n, %chunks
  %skip_full = mul i64 %i, %size
  %plain = sub i64 %chunks, %rest
  %plain_before = call i64 @llvm.umin.i64(i64 %i, i64 %plain)
  %skip_extra = sub i64 %i, %plain_before
  %begin = add i64 %skip_full, %skip_extra
  %gets_extra = icmp uge i64 %i, %plain
  %extra = zext i1 %gets_extra to i64
  %length = add i64 %size, %extra
  %step_up = add i64 %length, 7
  %step = udiv i64 %step_up, 8
  %counter = getelementptr [1024 x [8 x i64]], ptr @tp_next, i64 0, i64 %i, i64 0
  br label %claim

claim:
  %offset = atomicrmw add ptr %counter, i64 %step monotonic
  %left = icmp ult i64 %offset, %length
  br i1 %left, label %run, label %done

run:
  %lo = add i64 %begin, %offset
  %offset_end = add i64 %offset, %step
  %clamped = call i64 @llvm.umin.i64(i64 %offset_end, i64 %length)
  %hi = add i64 %begin, %clamped
  %status = call i32 %fn(i64 %lo, i64 %hi, ptr %closure)
  %failed = icmp ne i32 %status, 0
  br i1 %failed, label %record, label %claim

record:
  %ignored = cmpxchg ptr @tp_status, i32 0, i32 %status seq_cst monotonic
  br label %claim

done:
  ret void
}

; Waits one round of a spin: a pause hint for @tp_pause_rounds rounds, then sched_yield for
; @tp_yield_rounds rounds. @tp_init sets the pause rounds to @tp_pause_rounds_normal (about
; 0.5 µs), or to 0 when there are more threads than CPUs so that a thread waiting for a core
; gets one at once. The pause phase is short because the scheduler may put the caller and
; a worker on one CPU at any time (another process holds the other): each side then spins
; away the time the other needs, and 512 rounds (15 µs) made every launch cost 33 µs.
; The yield phase (tens of µs when the CPUs are free) keeps back-to-back launches from
; sleeping. Returns false when the caller should sleep instead.
define internal i1 @tp_backoff(i32 %round) {
entry:
  %pause_rounds = load atomic i32, ptr @tp_pause_rounds monotonic, align 4
  %yield_rounds = load i32, ptr @tp_yield_rounds, align 4
  %pausing = icmp ult i32 %round, %pause_rounds
  br i1 %pausing, label %pause, label %yield_phase

pause:
  call void @tp_relax()
  ret i1 true

yield_phase:
  %spin_rounds = add i32 %pause_rounds, %yield_rounds
  %yielding = icmp ult i32 %round, %spin_rounds
  br i1 %yielding, label %yield, label %give_up

yield:
  %rc = call i32 @sched_yield()
  ret i1 true

give_up:
  ret i1 false
}

; Returns @tp_gen once it differs from %seen: spins, then sleeps on the futex.
define internal i32 @tp_await_gen(i32 %seen) {
entry:
  br label %spin

spin:
  %round = phi i32 [ 0, %entry ], [ %next_round, %spin_more ]
  %gen = load atomic i32, ptr @tp_gen acquire, align 4
  %changed = icmp ne i32 %gen, %seen
  br i1 %changed, label %done, label %spin_more

spin_more:
  %keep_spinning = call i1 @tp_backoff(i32 %round)
  %next_round = add i32 %round, 1
  br i1 %keep_spinning, label %spin, label %sleep

sleep:
  %was_sleeping = atomicrmw add ptr @tp_sleepers, i32 1 seq_cst
  %gen_now = load atomic i32, ptr @tp_gen seq_cst, align 4
  %unchanged = icmp eq i32 %gen_now, %seen
  br i1 %unchanged, label %block, label %woken

block:
  call void @tp_futex_wait(ptr @tp_gen, i32 %seen)
  br label %woken

woken:
  %still_sleeping = atomicrmw sub ptr @tp_sleepers, i32 1 seq_cst
  %gen_after = load atomic i32, ptr @tp_gen acquire, align 4
  %changed_after = icmp ne i32 %gen_after, %seen
  br i1 %changed_after, label %done, label %sleep

done:
  %result = phi i32 [ %gen, %spin ], [ %gen_after, %woken ]
  ret i32 %result
}

; Returns once every worker has finished the current launch: spins, then sleeps.
define internal void @tp_await_workers() {
entry:
  br label %spin

spin:
  %round = phi i32 [ 0, %entry ], [ %next_round, %spin_more ]
  %pending = load atomic i32, ptr @tp_pending acquire, align 4
  %finished = icmp eq i32 %pending, 0
  br i1 %finished, label %done, label %spin_more

spin_more:
  %keep_spinning = call i1 @tp_backoff(i32 %round)
  %next_round = add i32 %round, 1
  br i1 %keep_spinning, label %spin, label %announce

announce:
  %was_waiting = atomicrmw xchg ptr @tp_caller_waiting, i32 1 seq_cst
  br label %check

check:
  %pending_now = load atomic i32, ptr @tp_pending seq_cst, align 4
  %finished_now = icmp eq i32 %pending_now, 0
  br i1 %finished_now, label %unannounce, label %block

block:
  call void @tp_futex_wait(ptr @tp_pending, i32 %pending_now)
  br label %check

unannounce:
  store atomic i32 0, ptr @tp_caller_waiting seq_cst, align 4
  br label %done

done:
  ret void
}

define internal ptr @tp_worker(ptr %arg) {
entry:
  %index = ptrtoint ptr %arg to i64
  %start = load atomic i32, ptr @tp_init_gen acquire, align 4
  br label %loop

loop:
  %seen = phi i32 [ %start, %entry ], [ %gen, %loop ], [ %gen, %notify ], [ %gen, %wake ]
  %gen = call i32 @tp_await_gen(i32 %seen)
  call void @tp_run(i64 %index)
  %left = atomicrmw sub ptr @tp_pending, i32 1 seq_cst
  %last = icmp eq i32 %left, 1
  br i1 %last, label %notify, label %loop

notify:
  %waiting = load atomic i32, ptr @tp_caller_waiting seq_cst, align 4
  %caller_sleeps = icmp ne i32 %waiting, 0
  br i1 %caller_sleeps, label %wake, label %loop

wake:
  call void @tp_futex_wake(ptr @tp_pending, i64 1)
  br label %loop
}

; Creates the workers (called by the launch that owns the pool). Workers block all
; signals so the Python main thread keeps receiving them. If thread creation fails
; part-way, the pool keeps the workers it got (possibly none: launches then run inline).
define internal void @tp_init() {
entry:
  %thread = alloca i64, align 8
  %all_signals = alloca [128 x i8], align 8
  %old_signals = alloca [128 x i8], align 8
  %threads = call i64 @tp_thread_count()
  %cpus = call i64 @tp_cpu_count()
  %oversubscribed = icmp ugt i64 %threads, %cpus
  %pause_rounds_normal = load i32, ptr @tp_pause_rounds_normal, align 4
  %pause_rounds = select i1 %oversubscribed, i32 0, i32 %pause_rounds_normal
  store atomic i32 %pause_rounds, ptr @tp_pause_rounds monotonic, align 4
  call void @tp_register_atfork()
  %gen = load atomic i32, ptr @tp_gen monotonic, align 4
  store atomic i32 %gen, ptr @tp_init_gen release, align 4
  %filled = call i32 @sigfillset(ptr %all_signals)
  %masked = call i32 @pthread_sigmask(i32 2, ptr %all_signals, ptr %old_signals)
  br label %next

next:
  %index = phi i64 [ 1, %entry ], [ %next_index, %create ]
  %more = icmp ult i64 %index, %threads
  br i1 %more, label %create, label %finish

create:
  %arg = inttoptr i64 %index to ptr
  %rc = call i32 @pthread_create(ptr %thread, ptr null, ptr @tp_worker, ptr %arg)
  %next_index = add i64 %index, 1
  %created = icmp eq i32 %rc, 0
  br i1 %created, label %next, label %finish

finish:
  %stop = phi i64 [ %index, %next ], [ %index, %create ]
  %restored = call i32 @pthread_sigmask(i32 2, ptr %old_signals, ptr null)
  %workers = sub i64 %stop, 1
  %workers32 = trunc i64 %workers to i32
  store atomic i32 %workers32, ptr @tp_workers monotonic, align 4
  store atomic i32 1, ptr @tp_ready release, align 4
  ret void
}

; A forked child has no workers: make its next launch build a fresh pool.
define internal void @tp_after_fork_child() {
entry:
  store atomic i32 0, ptr @tp_ready monotonic, align 4
  store atomic i32 0, ptr @tp_workers monotonic, align 4
  store atomic i32 0, ptr @tp_busy monotonic, align 4
  store atomic i32 0, ptr @tp_sleepers monotonic, align 4
  store atomic i32 0, ptr @tp_pending monotonic, align 4
  store atomic i32 0, ptr @tp_caller_waiting monotonic, align 4
  ret void
}

define internal void @tp_register_atfork() {
entry:
  %done = load atomic i32, ptr @tp_atfork_registered monotonic, align 4
  %registered = icmp ne i32 %done, 0
  br i1 %registered, label %exit, label %register

register:
  %rc = call i32 @__register_atfork(ptr null, ptr null, ptr @tp_after_fork_child, ptr null)
  store atomic i32 1, ptr @tp_atfork_registered monotonic, align 4
  br label %exit

exit:
  ret void
}

; PYIR_NUM_THREADS if it is a positive integer, else the CPU count; at most @tp_max_threads.
define internal i64 @tp_thread_count() {
entry:
  %parse_end = alloca ptr, align 8
  %max = load i64, ptr @tp_max_threads, align 8
  %env = call ptr @getenv(ptr @tp_env_name)
  %has_env = icmp ne ptr %env, null
  br i1 %has_env, label %env_set, label %cpus

env_set:
  %first = load i8, ptr %env, align 1
  %non_empty = icmp ne i8 %first, 0
  br i1 %non_empty, label %parse, label %cpus

parse:
  %value = call i64 @strtol(ptr %env, ptr %parse_end, i32 10)
  %end = load ptr, ptr %parse_end, align 8
  %end_char = load i8, ptr %end, align 1
  %whole = icmp eq i8 %end_char, 0
  %positive = icmp sgt i64 %value, 0
  %valid = and i1 %whole, %positive
  br i1 %valid, label %clamp, label %cpus

cpus:
  %cpu_count = call i64 @tp_cpu_count()
  br label %clamp

clamp:
  %wanted = phi i64 [ %value, %parse ], [ %cpu_count, %cpus ]
  %count = call i64 @llvm.smin.i64(i64 %wanted, i64 %max)
  ret i64 %count
}

; The CPUs this process may run on (sched_getaffinity), else the online CPUs (sysconf),
; else 1.
define internal i64 @tp_cpu_count() {
entry:
  %mask = alloca <16 x i64>, align 8
  store <16 x i64> zeroinitializer, ptr %mask, align 8
  %rc = call i32 @sched_getaffinity(i32 0, i64 128, ptr %mask)
  %got_mask = icmp eq i32 %rc, 0
  br i1 %got_mask, label %count_mask, label %online

count_mask:
  %bits = load <16 x i64>, ptr %mask, align 8
  %per_word = call <16 x i64> @llvm.ctpop.v16i64(<16 x i64> %bits)
  %cpus = call i64 @llvm.vector.reduce.add.v16i64(<16 x i64> %per_word)
  %some_cpus = icmp sgt i64 %cpus, 0
  br i1 %some_cpus, label %done, label %online

online:
  %online_cpus = call i64 @sysconf(i32 84)
  %known = icmp sgt i64 %online_cpus, 0
  %online_or_one = select i1 %known, i64 %online_cpus, i64 1
  br label %done

done:
  %count = phi i64 [ %cpus, %count_mask ], [ %online_or_one, %online ]
  ret i64 %count
}

define internal void @tp_futex_wait(ptr %word, i32 %expected) {
entry:
  %nr = load i64, ptr @tp_sys_futex, align 8
  %value = zext i32 %expected to i64
  %rc = call i64 (i64, ...) @syscall(i64 %nr, ptr %word, i64 128, i64 %value, ptr null)
  ret void
}

define internal void @tp_futex_wake(ptr %word, i64 %count) {
entry:
  %nr = load i64, ptr @tp_sys_futex, align 8
  %rc = call i64 (i64, ...) @syscall(i64 %nr, ptr %word, i64 129, i64 %count)
  ret void
}
