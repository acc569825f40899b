"""pyir.codegen: native code generation (LLVM through llvmlite) and the calling ABI."""
