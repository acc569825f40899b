"""pyir.codegen: LLVM code generation for lowered prim functions (`llvm.codegen`), the
native calling convention (`abi`), targets (`target.Target`) and the IR pipeline and
object emission (`compile`). llvmlite loads only when these submodules are imported."""
