"""A software prefetch for compiled kernels: ask the CPU to start loading an array element's cache line.

A step over many chains on a large model reads a few scattered cache lines per
chain (its tree paths, its flip ratios), each a miss to main memory that a
chain-by-chain loop waits for in turn. Prefetching every chain's lines first
lets the memory system fetch them side by side, so the moves that follow find
them in cache. A prefetch changes no value: it is only a hint (LLVM's
``llvm.prefetch``), and an index outside the array is never dereferenced.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def prefetch(typingctx, array, row, column):
    """Hint that ``array[row, column]`` (a 2-D array) will be read soon: load its line into every cache level."""
    if not (isinstance(array, types.Array) and array.ndim == 2 and isinstance(row, types.Integer)
            and isinstance(column, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        array_type, row_type, column_type = signature.args
        value = context.make_array(array_type)(context, builder, args[0])
        indices = [context.cast(builder, args[1], row_type, types.intp),
                   context.cast(builder, args[2], column_type, types.intp)]
        pointer = cgutils.get_item_pointer(context, builder, array_type, value, indices, wraparound=False)
        byte_pointer = builder.bitcast(pointer, ir.IntType(8).as_pointer())
        i32 = ir.IntType(32)
        hint = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.VoidType(), [byte_pointer.type, i32, i32, i32]), "llvm.prefetch.p0")
        builder.call(hint, [byte_pointer, i32(0), i32(3), i32(1)])  # read, keep in all levels, data cache
        return context.get_dummy_value()

    return types.void(array, row, column), codegen
