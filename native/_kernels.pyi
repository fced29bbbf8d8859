# The native kernel module's Python interface (native/kernels/*.cpp bind it).
import mlx.core as mx

MLX_VERSION: str

def isa() -> str: ...
def limit_isa(name: str) -> str: ...
def set_threads(count: int) -> None: ...
def threads() -> int: ...
def families() -> list[tuple[str, str]]: ...
def matvec(x: mx.array, w: mx.array, *, stream: mx.Stream | mx.Device | None = None) -> mx.array: ...

# convolution
def depthwise_conv2d(
    x: mx.array,
    w: mx.array,
    *,
    stride: list[int] | tuple[int, int] = (1, 1),
    padding_lo: list[int] | tuple[int, int] = (0, 0),
    padding_hi: list[int] | tuple[int, int] = (0, 0),
    dilation: list[int] | tuple[int, int] = (1, 1),
    bias: mx.array | None = None,
    activation: str = "none",
    stream: mx.Stream | mx.Device | None = None,
) -> mx.array: ...
def depthwise_conv1d(
    x: mx.array,
    w: mx.array,
    *,
    stride: int = 1,
    padding_lo: int = 0,
    padding_hi: int = 0,
    dilation: int = 1,
    bias: mx.array | None = None,
    activation: str = "none",
    stream: mx.Stream | mx.Device | None = None,
) -> mx.array: ...

# elementwise
def rms_norm(
    x: mx.array, weight: mx.array | None, eps: float, *, stream: mx.Stream | mx.Device | None = None
) -> mx.array: ...
def layer_norm(
    x: mx.array,
    weight: mx.array | None,
    bias: mx.array | None,
    eps: float,
    *,
    stream: mx.Stream | mx.Device | None = None,
) -> mx.array: ...
def softmax(x: mx.array, precise: bool = False, *, stream: mx.Stream | mx.Device | None = None) -> mx.array: ...
def exp(x: mx.array, *, stream: mx.Stream | mx.Device | None = None) -> mx.array: ...
def sigmoid(x: mx.array, *, stream: mx.Stream | mx.Device | None = None) -> mx.array: ...
def erf(x: mx.array, *, stream: mx.Stream | mx.Device | None = None) -> mx.array: ...

# quantized
def quantized_matmul(
    x: mx.array,
    w: mx.array,
    scales: mx.array,
    biases: mx.array,
    *,
    group_size: int,
    bits: int,
    activation_bits: int = 0,
    stream: mx.Stream | mx.Device | None = None,
) -> mx.array: ...

# attention
def attention(
    q: mx.array,
    k: mx.array,
    v: mx.array,
    *,
    scale: float,
    mask: mx.array | str | None = None,
    stream: mx.Stream | mx.Device | None = None,
) -> mx.array: ...
