// remove-identity-casts (transforms/catalog.py) written in PDL: an mlx.astype whose
// result type is its operand's type is replaced by the operand. docs/pdl.md explains it;
// tests/filecheck/transforms/apply-pdl.mlir checks it gives the built-in pattern's IR.
pdl.pattern @remove_identity_cast : benefit(1) {
  %type = pdl.type
  %x = pdl.operand : %type
  %cast = pdl.operation "mlx.astype" (%x : !pdl.value) -> (%type : !pdl.type)
  pdl.rewrite %cast {
    pdl.replace %cast with (%x : !pdl.value)
  }
}
