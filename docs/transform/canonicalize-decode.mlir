// A transform script (docs/transform-scripts.md): canonicalize the function named
// `decode` and leave every other function as it is.
builtin.module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op) {
    %decode = transform.structured.match ops{["func.func"]} attributes {sym_name = "decode"} in %root : (!transform.any_op) -> !transform.any_op
    %done = transform.apply_registered_pass "canonicalize" to %decode : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
