"""The constant-folding IR builder: exact integer folds, instructions otherwise, one
instruction for a pure operation repeated in a block (or in the function, for operations
of the first block's values asked for inside loops), and a load reused until what it read
may have been written."""

import re

import llvmlite.ir as ir
import pytest

from pyir.codegen.builder import Builder, int_value

I1, I8, I64 = ir.IntType(1), ir.IntType(8), ir.IntType(64)


@pytest.fixture
def b():
    mod = ir.Module()
    fn = ir.Function(mod, ir.FunctionType(I64, [I64]), "f")
    return Builder(fn.append_basic_block("entry"))


def c(value, ty=I64):
    return ir.Constant(ty, value)


@pytest.mark.parametrize("op, x, y, want", [
    ("add", 3, 4, 7), ("sub", 3, 4, -1), ("mul", -3, 4, -12),
    ("sdiv", -7, 2, -3), ("srem", -7, 2, -1), ("sdiv", 7, -2, -3), ("srem", 7, -2, 1),
    ("and_", 6, 3, 2), ("or_", 6, 3, 7), ("xor", 6, 3, 5),
])
def test_integer_operations_fold(b, op, x, y, want):
    assert int_value(getattr(b, op)(c(x), c(y))) == want
    assert not b.block.instructions


def test_folds_wrap_like_the_machine(b):
    assert int_value(b.add(c(127, I8), c(1, I8))) == -128
    assert int_value(b.mul(c(1 << 62), c(4))) == 0


@pytest.mark.parametrize("op, y", [("sdiv", 0), ("srem", 0)])
def test_division_by_zero_is_left_to_llvm(b, op, y):
    out = getattr(b, op)(c(5), c(y))
    assert isinstance(out, ir.Instruction) and len(b.block.instructions) == 1


def test_comparisons_select_and_casts_fold(b):
    assert int_value(b.icmp_signed("<", c(-1), c(0))) == 1
    assert int_value(b.icmp_unsigned("<", c(-1), c(0))) == 0   # 2**64 - 1 unsigned
    x = b.function.args[0]
    assert b.select(b.icmp_signed(">=", c(2), c(3)), x, c(9)).constant == 9
    assert int_value(b.zext(c(-1, I8), I64)) == 255
    assert int_value(b.sext(c(-1, I8), I64)) == -1
    assert int_value(b.trunc(c(300), I8)) == 44
    assert int_value(b.icmp_signed("==", c(1, I1), c(1, I1))) == 1
    assert not b.block.instructions


def test_anything_not_constant_is_emitted(b):
    x = b.function.args[0]
    assert isinstance(b.add(x, c(1)), ir.Instruction)
    assert isinstance(b.icmp_signed("<", x, c(1)), ir.Instruction)
    with pytest.raises(ValueError, match="same type"):
        b.add(c(1), c(1, I8))


def test_an_identity_operand_leaves_the_other(b):
    x = b.function.args[0]
    assert b.add(x, c(0)) is x and b.add(c(0), x) is x
    assert b.sub(x, c(0)) is x and b.mul(c(1), x) is x and b.mul(x, c(1)) is x
    assert b.sdiv(x, c(1)) is x and b.or_(x, c(0)) is x and b.xor(c(0), x) is x
    assert b.and_(x, c(-1)) is x
    assert not b.block.instructions
    assert isinstance(b.sub(c(0), x), ir.Instruction)         # 0 - x is not x
    assert isinstance(b.sdiv(c(1), x), ir.Instruction)


def test_a_zero_factor_or_mask_gives_zero(b):
    x = b.function.args[0]
    for zero in (b.mul(c(0), x), b.mul(x, c(0)), b.and_(x, c(0)), b.and_(c(0), x)):
        assert int_value(zero) == 0 and zero.type == I64
    assert not b.block.instructions
    assert isinstance(b.or_(x, c(-1)), ir.Instruction)         # only what the table says


def test_a_pure_operation_repeated_in_a_block_is_one_instruction(b):
    x = b.function.args[0]
    first = b.mul(x, c(6144))
    assert b.mul(x, c(6144)) is first                       # constants compare by text
    assert b.mul(x, c(1024)) is not first
    assert b.add(first, c(1)) is b.add(first, c(1))
    assert b.add(x, c(1, I64)) is not b.sub(x, c(1, I64))
    assert b.icmp_signed("<", x, c(3)) is b.icmp_signed("<", x, c(3))
    assert b.icmp_signed("<", x, c(3)) is not b.icmp_signed("<=", x, c(3))
    ptr = b.inttoptr(x, ir.PointerType())
    assert b.gep(ptr, [x], inbounds=True, source_etype=I8) is b.gep(ptr, [x], inbounds=True,
                                                                   source_etype=I8)
    assert b.gep(ptr, [x], source_etype=I8) is not b.gep(ptr, [x], inbounds=True,
                                                         source_etype=I8)
    f = b.sitofp(x, ir.DoubleType())
    assert b.sitofp(x, ir.DoubleType()) is f and b.sitofp(x, ir.FloatType()) is not f
    assert b.fcmp_ordered("<", f, c(1.0, ir.DoubleType())) is \
        b.fcmp_ordered("<", f, c(1.0, ir.DoubleType()))
    assert len(b.block.instructions) == 13


def test_numbering_shares_the_first_blocks_work_in_loops_and_stops_at_other_blocks(b):
    """The first block dominates every block made after it: inside a loop, an operation of
    values defined there (or of arguments) is made there once, before its branch, and
    shared by later loop nests; outside every loop it is made where it is asked (moved up,
    a value used only after a loop would live across the loop); other operations are made
    per block."""
    top = b.block
    x = b.function.args[0]
    ptr = b.inttoptr(x, ir.PointerType())
    loaded = b.load(ptr, typ=I64)
    first = b.mul(x, c(3))
    nxt = b.append_basic_block("next")
    b.branch(nxt)
    b.position_at_end(nxt)
    with b.loop_frame(top, nxt):
        assert b.mul(x, c(3)) is first
        twice = b.mul(loaded, c(2))
        assert twice.parent is top and top.instructions[-2] is twice    # before the branch
        here = b.load(ptr, typ=I64)
        assert here is not loaded and here.parent is nxt                # a load stays
        again = b.mul(here, c(3))
        assert again.parent is nxt
    after = b.append_basic_block("after")
    b.branch(after)
    b.position_at_end(after)
    outside = b.mul(x, c(5))
    assert outside.parent is after and b.mul(x, c(5)) is outside
    assert b.mul(loaded, c(2)) is not twice
    b.position_at_end(b.append_basic_block("third"))
    assert b.mul(here, c(3)) is not again
    assert b.fadd(c(1.0, ir.FloatType()), c(2.0, ir.FloatType())) is not \
        b.fadd(c(1.0, ir.FloatType()), c(2.0, ir.FloatType()))     # not numbered


def test_an_operation_of_an_allocation_is_shared_from_the_first_block():
    """A function emitter's allocations are in an entry block of their own, before the
    builder's first block: they dominate every block too, and two loop nests share an
    operation of them."""
    fn = ir.Function(ir.Module(), ir.FunctionType(I64, []), "f")
    entry = Builder(fn.append_basic_block("entry"))
    b = Builder(fn.append_basic_block("body"))
    tile = entry.alloca(I64, size=c(8))
    first_loop = b.append_basic_block("first_loop")
    b.branch(first_loop)
    b.position_at_end(first_loop)
    with b.loop_frame(fn.blocks[1], first_loop):
        row = b.gep(tile, [c(3)], source_etype=I64)
    assert row.parent is fn.blocks[1]
    second_loop = b.append_basic_block("second_loop")
    b.branch(second_loop)
    b.position_at_end(second_loop)
    with b.loop_frame(first_loop, second_loop):
        assert b.gep(tile, [c(3)], source_etype=I64) is row


def test_a_load_is_reused_until_what_it_reads_may_be_written():
    mod = ir.Module()
    ptr = ir.PointerType()
    fn = ir.Function(mod, ir.FunctionType(I64, [ptr, ptr, I64]), "f")
    a, other, x = fn.args
    a.add_attribute("noalias")
    b = Builder(fn.append_basic_block("entry"))
    tile = b.alloca(I64, size=c(4))
    row = b.gep(a, [x], source_etype=I64)
    first = b.load(row, typ=I64)
    assert b.load(row, typ=I64) is first
    assert b.load(row, typ=I64, align=8) is not first             # another operation
    acc = b.load(tile, typ=I64)
    b.store(b.add(acc, first), tile)                               # the tile: an alloca
    assert b.load(row, typ=I64) is first
    assert b.load(tile, typ=I64) is not acc
    b.store(first, b.gep(other, [x], source_etype=I64))           # may be anything
    again = b.load(row, typ=I64)
    assert again is not first
    b.call(ir.Function(mod, ir.FunctionType(ir.VoidType(), []), "g"), [])
    assert b.load(row, typ=I64) is not again


def test_a_load_is_reused_across_intrinsics_that_write_no_memory():
    """A masked load and vector math write nothing (a masked tail's rows read the same A
    element once per k); a masked store, an intrinsic taking a pointer, may write it."""
    mod = ir.Module()
    ptr, v4, m4 = ir.PointerType(), ir.VectorType(ir.FloatType(), 4), ir.VectorType(I1, 4)
    fn = ir.Function(mod, ir.FunctionType(I64, [ptr, ptr]), "f")
    a, other = fn.args
    a.add_attribute("noalias")
    b = Builder(fn.append_basic_block("entry"))
    first = b.load(a, typ=I64)
    masked_load = ir.Function(mod, ir.FunctionType(v4, [ptr, ir.IntType(32), m4, v4]),
                              "llvm.masked.load.v4f32.p0")
    mask = ir.Constant(m4, [1, 1, 0, 0])
    vec = b.call(masked_load, [other, c(4, ir.IntType(32)), mask, ir.Constant(v4, None)])
    fabs = ir.Function(mod, ir.FunctionType(v4, [v4]), "llvm.fabs.v4f32")
    vec = b.call(fabs, [vec])
    assert b.load(a, typ=I64) is first
    masked_store = ir.Function(mod, ir.FunctionType(ir.VoidType(), [v4, ptr, ir.IntType(32), m4]),
                               "llvm.masked.store.v4f32.p0")
    b.call(masked_store, [vec, other, c(4, ir.IntType(32)), mask])
    assert b.load(a, typ=I64) is not first


def _bench_matmul():
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).resolve().parents[2] / "bench" / "matmul.py"
    spec = importlib.util.spec_from_file_location("bench_matmul_builder", path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def _matmul_ir(n, tile=(7, 32)):
    from pyir.codegen.llvm import codegen
    from pyir.transform import lower
    m = _bench_matmul()
    text, _ = codegen(lower(m.schedule_matmul(m.matmul_func(n), tile=tile).mod))
    return text


def test_scheduled_kernel_ir_has_no_constant_only_integer_instructions():
    """The 7x32 matmul schedule with static shapes: every index is constant-folded or uses a
    loop variable."""
    const_only = re.compile(r"= (add|sub|mul|sdiv|srem|icmp \w+|select) i(1|64) -?\d+, i?\d* ?-?\d+$")
    assert not [line for line in _matmul_ir(64).splitlines() if const_only.search(line)]


@pytest.mark.parametrize("n", [64, None])
def test_register_tile_loop_computes_no_invariant_index(n):
    """In the k loop of the register tile (the block of FMAs) every multiplication uses k
    and every addition adds a constant: row offsets (``i * 6144``, ``i * n``) and row
    pointers (``A + (i * 6 + r) * n``) are computed before it, as LICM and loop strength
    reduction would; what is left is k, k times the panel width, and constant offsets."""
    tile = (6, 2 * _bench_matmul().vector_lanes())                # 12 vectors on any host
    blocks = re.split(r"\n(?=[\w.]+:)", _matmul_ir(n, tile=tile))
    (k_loop,) = [b for b in blocks if b.count("fmul contract <") >= 12]
    k = re.search(r'(%"[\w.]+") = phi\s+i64', k_loop).group(1)
    muls = [line for line in k_loop.splitlines() if "= mul i64" in line]
    assert muls and all(f"mul i64 {k}," in line for line in muls)
    adds = [line for line in k_loop.splitlines() if "= add i64" in line]
    assert adds and all(re.search(r"add i64 %\S+, -?\d+$", line) for line in adds)
    # Each A element and B vector is loaded once per k, not once per product.
    loaded = re.findall(r"= load (.+), align", k_loop)
    assert len(loaded) == len(set(loaded))
    assert sum(1 for t in loaded if t.startswith("float,")) == 6


def test_constants_are_shared_but_kept_apart_bit_for_bit():
    from pyir.codegen import types as T
    assert T.constant("float32", 1.5) is T.constant("float32", 1.5)
    assert str(T.constant("float32", -0.0)) != str(T.constant("float32", 0.0))
    assert str(T.constant("float64", 1)) == "double 0x3ff0000000000000"
    assert str(T.constant("int32", 1)) == "i32 1"
    assert str(T.constant("bool", True)) == "i1 1"
    assert str(T.constant("float32", 2.0, lanes=4)).startswith("<4 x float>")


def _loop(b):
    """A preheader after the first block, holding a load ``y``; a loop header with phi
    %i, positioned in the header."""
    x = b.function.args[0]
    pre = b.function.append_basic_block("pre")
    b.branch(pre)
    b.position_at_end(pre)
    y = b.load(b.inttoptr(x, ir.PointerType()), typ=I64)
    header = b.append_basic_block("loop")
    b.branch(header)
    b.position_at_end(header)
    i = b.phi(I64)
    i.add_incoming(c(0), pre)
    return x, y, pre, header, i


def test_loop_invariant_operations_go_to_the_preheader(b):
    top = b.block
    x, y, pre, header, i = _loop(b)
    with b.loop_frame(pre, header):
        row = b.mul(y, c(6144))                 # operands defined before the loop
        assert row.parent is pre and pre.instructions[-1] is pre.terminator
        addr = b.add(row, i)                    # uses the loop variable: stays
        assert addr.parent is header
        assert b.mul(y, c(6144)) is row         # numbered where it went
        inner_pre = b.block
        inner = b.append_basic_block("inner")
        b.branch(inner)
        b.position_at_end(inner)
        with b.loop_frame(inner_pre, inner):
            assert b.add(y, c(1)).parent is pre         # out of both loops
            assert b.add(x, c(1)).parent is top         # of arguments only: the first block
            assert b.add(addr, c(1)).parent is header   # out of the inner loop only
            assert b.sdiv(y, c(4)).parent is pre        # cannot trap: moves
            assert b.sdiv(c(4), y).parent is inner      # may divide by zero: stays
            assert b.sdiv(y, c(-1)).parent is inner     # may overflow: stays
            assert b.block is inner and not inner.is_terminated
    assert b.add(y, c(2)).parent is b.block     # no loop open: where the builder is


def test_moving_code_keeps_the_position_before_a_terminator(b):
    x, y, pre, header, i = _loop(b)
    with b.loop_frame(pre, header):
        b.branch(header)
        with b.goto_block(header):              # llvmlite positions before the branch
            moved = b.mul(y, c(3))
            here = b.add(moved, i)
        assert moved.parent is pre
        assert header.instructions[-2:] == [here, header.terminator]
