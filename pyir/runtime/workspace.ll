; pyir's heap blocks for generated code: a small cache of large blocks (Linux, libc).
;
; Exported:
;   ptr @pyir_alloc(i64 %size)
;       A block of %size bytes (a multiple of 64, as generated code asks) aligned to 64,
;       or null. A cached block of %size to 2 * %size bytes is taken when there is one.
;   void @pyir_free(ptr %p, i64 %size)
;       Gives back a block of @pyir_alloc asked for %size bytes (null: nothing). A block of
;       @ws_min to @ws_max bytes goes to the cache: an empty slot, else in place of the
;       smallest cached block if that one is smaller (which is freed); others are freed.
;   void @pyir_release_blocks()
;       Frees the cached blocks (none while another thread is in these functions).
;
; Why: glibc serves a block above its mmap threshold (32 MiB at most) with a fresh mapping
; and unmaps it on free, so every call of a kernel whose temporary is that large faulted in
; every page again: packing B of a 16 x 4096 x 4096 matmul (64 MiB, 16384 page faults) took
; three quarters of the call. The cache keeps @ws_slots blocks, so at most @ws_slots *
; @ws_max bytes stay mapped for the process after their kernels return.
; The slots are guarded by a try-lock: a thread that finds it taken (another thread in
; these functions, or a child forked while a thread held it) allocates or frees directly,
; so nothing ever waits on it.

@ws_busy = internal global i32 0, align 64
@ws_ptr = internal global [4 x ptr] zeroinitializer, align 64
@ws_size = internal global [4 x i64] zeroinitializer, align 64
@ws_slots = internal constant i64 4
@ws_min = internal constant i64 1048576
@ws_max = internal constant i64 268435456

declare ptr @aligned_alloc(i64, i64)
declare void @free(ptr)

define internal i1 @ws_trylock() {
entry:
  %old = atomicrmw xchg ptr @ws_busy, i32 1 acquire
  %got = icmp eq i32 %old, 0
  ret i1 %got
}

define internal void @ws_unlock() {
entry:
  store atomic i32 0, ptr @ws_busy release, align 4
  ret void
}

define ptr @pyir_alloc(i64 %size) {
entry:
  %min = load i64, ptr @ws_min
  %big = icmp uge i64 %size, %min
  br i1 %big, label %lock, label %fresh

lock:
  %got = call i1 @ws_trylock()
  br i1 %got, label %scan, label %fresh

scan:
  %slots = load i64, ptr @ws_slots
  br label %slot

slot:
  %k = phi i64 [ 0, %scan ], [ %next, %skip ]
  %pp = getelementptr [4 x ptr], ptr @ws_ptr, i64 0, i64 %k
  %sp = getelementptr [4 x i64], ptr @ws_size, i64 0, i64 %k
  %p = load ptr, ptr %pp
  %s = load i64, ptr %sp
  %full = icmp ne ptr %p, null
  %enough = icmp uge i64 %s, %size
  %over = sub i64 %s, %size
  %close = icmp ule i64 %over, %size
  %a = and i1 %full, %enough
  %fits = and i1 %a, %close
  br i1 %fits, label %take, label %skip

take:
  store ptr null, ptr %pp
  call void @ws_unlock()
  ret ptr %p

skip:
  %next = add i64 %k, 1
  %more = icmp ult i64 %next, %slots
  br i1 %more, label %slot, label %none

none:
  call void @ws_unlock()
  br label %fresh

fresh:
  %q = call ptr @aligned_alloc(i64 64, i64 %size)
  ret ptr %q
}

define void @pyir_free(ptr %p, i64 %size) {
entry:
  %null = icmp eq ptr %p, null
  br i1 %null, label %done, label %sized

sized:
  %min = load i64, ptr @ws_min
  %max = load i64, ptr @ws_max
  %above = icmp uge i64 %size, %min
  %below = icmp ule i64 %size, %max
  %cacheable = and i1 %above, %below
  br i1 %cacheable, label %lock, label %release

lock:
  %got = call i1 @ws_trylock()
  br i1 %got, label %scan, label %release

scan:
  %slots = load i64, ptr @ws_slots
  br label %slot

; The first empty slot, else the slot of the smallest cached block (%least, of %least_size).
slot:
  %k = phi i64 [ 0, %scan ], [ %next, %keep ]
  %least = phi i64 [ 0, %scan ], [ %least_next, %keep ]
  %least_size = phi i64 [ -1, %scan ], [ %least_size_next, %keep ]
  %pp = getelementptr [4 x ptr], ptr @ws_ptr, i64 0, i64 %k
  %sp = getelementptr [4 x i64], ptr @ws_size, i64 0, i64 %k
  %held = load ptr, ptr %pp
  %empty = icmp eq ptr %held, null
  br i1 %empty, label %put, label %keep

put:
  store ptr %p, ptr %pp
  store i64 %size, ptr %sp
  call void @ws_unlock()
  br label %done

keep:
  %s = load i64, ptr %sp
  %smaller = icmp ult i64 %s, %least_size
  %least_next = select i1 %smaller, i64 %k, i64 %least
  %least_size_next = select i1 %smaller, i64 %s, i64 %least_size
  %next = add i64 %k, 1
  %more = icmp ult i64 %next, %slots
  br i1 %more, label %slot, label %full

full:
  %evict = icmp ult i64 %least_size_next, %size
  br i1 %evict, label %swap, label %unlock

swap:
  %lp = getelementptr [4 x ptr], ptr @ws_ptr, i64 0, i64 %least_next
  %ls = getelementptr [4 x i64], ptr @ws_size, i64 0, i64 %least_next
  %old = load ptr, ptr %lp
  store ptr %p, ptr %lp
  store i64 %size, ptr %ls
  call void @ws_unlock()
  call void @free(ptr %old)
  br label %done

unlock:
  call void @ws_unlock()
  br label %release

release:
  call void @free(ptr %p)
  br label %done

done:
  ret void
}

define void @pyir_release_blocks() {
entry:
  %got = call i1 @ws_trylock()
  br i1 %got, label %scan, label %done

scan:
  %slots = load i64, ptr @ws_slots
  br label %slot

slot:
  %k = phi i64 [ 0, %scan ], [ %next, %slot ]
  %pp = getelementptr [4 x ptr], ptr @ws_ptr, i64 0, i64 %k
  %p = load ptr, ptr %pp
  store ptr null, ptr %pp
  call void @free(ptr %p)
  %next = add i64 %k, 1
  %more = icmp ult i64 %next, %slots
  br i1 %more, label %slot, label %unlock

unlock:
  call void @ws_unlock()
  br label %done

done:
  ret void
}
