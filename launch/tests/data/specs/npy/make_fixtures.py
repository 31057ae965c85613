"""Writes the .npy fixtures of the launch tests with real NumPy.

The files are committed; run this only to add one: `python3 make_fixtures.py` here.
"""
import numpy as np

a23 = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float32)
np.save("f32.npy", np.array([1, 2.5, -3], dtype=np.float32))
np.save("f32_2x3.npy", a23)
np.save("f32_fortran.npy", np.asfortranarray(a23))
np.save("f32_transposed.npy", a23.T)
np.save("f64.npy", np.array([1, 2, 3], dtype=np.float64))
np.save("f16.npy", np.array([0.5, -2, 65504], dtype=np.float16))
np.save("u8x4.npy", np.arange(8, dtype=np.uint8).reshape(2, 4))
np.save("bool.npy", np.array([True, False, True]))
np.save("i32_big_endian.npy", np.array([1, -2, 300], dtype=">i4"))
np.save("u32_scalar.npy", np.uint32(1024))
np.save("i16.npy", np.array([-1, 2, -3, 4], dtype=np.int16))
np.save("u64.npy", np.array([2**64 - 1, 0], dtype=np.uint64))
