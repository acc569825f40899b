; One compile unit from LLVM IR text to object code in one native call (see
; unit_compiler.py): the calls llvmlite's Python code makes one by one, made here in
; sequence, with the same llvmlite C functions.
;
; i32 @pyir_compile_unit(ptr fns, ptr ir, ptr triple, ptr layout, ptr pm, ptr pb, ptr tm,
;                        ptr out, ptr err)
;   fns     the addresses of the llvmlite functions, in the order of FUNCTIONS in
;           unit_compiler.py (ContextCreate .. ContextDispose)
;   ir      the unit's text (NUL-terminated); triple, layout: the module's target
;   pm, pb  the IR pipeline (module pass manager, pass builder), or pm = null for none
;   tm      the target machine
;   out     [3 x ptr]: on success the memory buffer of the object code, its start, its size
;   err     ptr to a message string, set on failure (the caller disposes of it)
; Returns 0, or where it failed: 1 parsing, 2 verifying, 3 making machine code. The module
; and its context are disposed of in every case.

define i32 @pyir_compile_unit(ptr %fns, ptr %ir, ptr %triple, ptr %layout, ptr %pm, ptr %pb,
                              ptr %tm, ptr %out, ptr %err) {
entry:
  %f0 = getelementptr ptr, ptr %fns, i64 0
  %context_create = load ptr, ptr %f0
  %f1 = getelementptr ptr, ptr %fns, i64 1
  %parse = load ptr, ptr %f1
  %f2 = getelementptr ptr, ptr %fns, i64 2
  %verify = load ptr, ptr %f2
  %f3 = getelementptr ptr, ptr %fns, i64 3
  %dispose_string = load ptr, ptr %f3
  %f4 = getelementptr ptr, ptr %fns, i64 4
  %set_target = load ptr, ptr %f4
  %f5 = getelementptr ptr, ptr %fns, i64 5
  %set_layout = load ptr, ptr %f5
  %f6 = getelementptr ptr, ptr %fns, i64 6
  %run_passes = load ptr, ptr %f6
  %f7 = getelementptr ptr, ptr %fns, i64 7
  %emit = load ptr, ptr %f7
  %f8 = getelementptr ptr, ptr %fns, i64 8
  %buffer_start = load ptr, ptr %f8
  %f9 = getelementptr ptr, ptr %fns, i64 9
  %buffer_size = load ptr, ptr %f9
  %f10 = getelementptr ptr, ptr %fns, i64 10
  %dispose_module = load ptr, ptr %f10
  %f11 = getelementptr ptr, ptr %fns, i64 11
  %context_dispose = load ptr, ptr %f11
  store ptr null, ptr %err
  %ctx = call ptr %context_create()
  %mod = call ptr %parse(ptr %ctx, ptr %ir, ptr %err)
  %parse_msg = load ptr, ptr %err
  %parse_failed = icmp ne ptr %parse_msg, null
  br i1 %parse_failed, label %parse_error, label %check

parse_error:
  %have_mod = icmp ne ptr %mod, null
  br i1 %have_mod, label %parse_error_module, label %parse_error_context
parse_error_module:
  call void %dispose_module(ptr %mod)
  br label %parse_error_context
parse_error_context:
  call void %context_dispose(ptr %ctx)
  ret i32 1

check:
  %broken = call i8 %verify(ptr %mod, ptr %err)
  %is_broken = icmp ne i8 %broken, 0
  br i1 %is_broken, label %verify_error, label %verified
verify_error:
  call void %dispose_module(ptr %mod)
  call void %context_dispose(ptr %ctx)
  ret i32 2
verified:
  %verify_msg = load ptr, ptr %err
  %have_msg = icmp ne ptr %verify_msg, null
  br i1 %have_msg, label %free_msg, label %target
free_msg:
  call void %dispose_string(ptr %verify_msg)
  store ptr null, ptr %err
  br label %target

target:
  call void %set_target(ptr %mod, ptr %triple)
  call void %set_layout(ptr %mod, ptr %layout)
  %have_passes = icmp ne ptr %pm, null
  br i1 %have_passes, label %optimize, label %machine
optimize:
  call void %run_passes(ptr %pm, ptr %mod, ptr %pb)
  br label %machine

machine:
  %buf = call ptr %emit(ptr %tm, ptr %mod, i32 1, ptr %err)
  call void %dispose_module(ptr %mod)
  call void %context_dispose(ptr %ctx)
  %emitted = icmp ne ptr %buf, null
  br i1 %emitted, label %done, label %emit_error
emit_error:
  ret i32 3

done:
  %start = call ptr %buffer_start(ptr %buf)
  %size = call i64 %buffer_size(ptr %buf)
  store ptr %buf, ptr %out
  %out_start = getelementptr ptr, ptr %out, i64 1
  store ptr %start, ptr %out_start
  %out_size = getelementptr ptr, ptr %out, i64 2
  store i64 %size, ptr %out_size
  ret i32 0
}
