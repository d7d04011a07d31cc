"""Compiled kernels (numba) of the engines' inner loops (identification gaps and blocks, Algorithm 1's online
loop) and of the samplers.

Importing this package loads nothing: each kernel module imports numba itself and is imported inside
the functions that run it, so ``import cabench`` stays fast. Numba compiles a kernel on its first call
and keeps the machine code beside the module (``cache=True``), so later processes load it.
"""
