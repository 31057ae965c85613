uint elem = thread_position_in_grid.x;
// The input's location from its shape and strides (MLX's elem_to_loc).
uint loc = elem_to_loc(elem, inp_shape, inp_strides, inp_ndim);
T tmp = inp[loc];
out[elem] = metal::exp(tmp);
