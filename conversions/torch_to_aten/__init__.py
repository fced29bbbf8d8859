"""The importer: `torch.export.ExportedProgram` → `aten`-level IR (`import_program`).

`core` holds what the modules share (types, locations, the import state, arguments read
by schema name); each op family (`elementwise`, `reduction`, `shape`, `indexing`,
`linalg`, `nn`, `creation`, `symbolic`) holds its handlers and their table; `importer`
merges the tables into `IMPORTERS` and imports a whole program.
"""

from mlxir.conversions.torch_to_aten.core import (
    DTYPES,
    Arguments,
    Handler,
    ImportError_,
    ImportState,
    UnsupportedDtypeError,
    UnsupportedOpsError,
    arguments_of,
    describe_location,
    element_type,
    location_of,
    packet_name,
    target_name,
    tensor_type_of,
    torch_overload,
    type_of_node,
)
from mlxir.conversions.torch_to_aten.decompositions import NATIVE_OPS, decomposition_table
from mlxir.conversions.torch_to_aten.importer import (
    IMPORTERS,
    UNSUPPORTED_BECAUSE,
    handler_for,
    import_program,
    signature_of,
    unsupported_because,
)
from mlxir.conversions.torch_to_aten.shape import COPY_FORMS, identity
from mlxir.conversions.torch_to_aten.symbolic import SYMBOLIC_IMPORTERS, dropped

__all__ = [
    "COPY_FORMS",
    "DTYPES",
    "IMPORTERS",
    "NATIVE_OPS",
    "SYMBOLIC_IMPORTERS",
    "UNSUPPORTED_BECAUSE",
    "Arguments",
    "Handler",
    "ImportError_",
    "ImportState",
    "UnsupportedDtypeError",
    "UnsupportedOpsError",
    "arguments_of",
    "decomposition_table",
    "describe_location",
    "dropped",
    "element_type",
    "handler_for",
    "identity",
    "import_program",
    "location_of",
    "packet_name",
    "signature_of",
    "target_name",
    "tensor_type_of",
    "torch_overload",
    "type_of_node",
    "unsupported_because",
]
