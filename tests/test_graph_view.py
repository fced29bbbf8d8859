"""Graph views of a program: the Model Explorer adapter (`mlxir.interop.model_explorer`)
on `.pt2`, `.mlir` and `.mlxfb` files, `mlxir debug`'s overlay, the page Model
Explorer serves in headless Chromium, and `view-op-graph`'s DOT."""

from __future__ import annotations

import base64
import json
import os
import re
import select
import shutil
import socket
import subprocess
import sys
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from mlxir import lower  # the pipeline of this device, as before the compiler took its target
from mlxir.codegen import serialize
from mlxir.conversions.registry import PASSES, PassEntry
from mlxir.debug.divergence import compare
from mlxir.dialects import mlx
from mlxir.dialects.context import make_context
from mlxir.interop.model_explorer import (
    FIRST_DIVERGENCE_COLOR,
    WITHIN_COLOR,
    convert,
    import_with_scopes,
    overlay_of,
    write_overlay,
)
from mlxir.interop.model_explorer.main import MlxirAdapter
from mlxir.transforms.view_op_graph import GraphOptions, op_graph_dot

# Its tests share compiled programs (module fixtures, caches): one worker compiles them once.
pytestmark = pytest.mark.xdist_group("test_graph_view")


class Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q_proj = nn.Linear(8, 8)
        self.o_proj = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.o_proj(torch.softmax(self.q_proj(x), -1) * x)


class Layer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(8)
        self.self_attn = Attention()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.self_attn(self.norm(x))


class Tiny(nn.Module):
    """Two layers in a ModuleList and a head whose output is split in two."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.layers = nn.ModuleList([Layer(), Layer()])
        self.head = nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        for layer in self.layers:
            x = layer(x)
        return self.head(x).split(2, -1)


COMPUTE = [
    ("layer_norm", "aten.layer_norm", "model/layers.0/norm"),
    ("linear", "aten.linear", "model/layers.0/self_attn/q_proj"),
    ("softmax", "aten.softmax", "model/layers.0/self_attn"),
    ("mul", "aten.mul", "model/layers.0/self_attn"),
    ("linear_1", "aten.linear", "model/layers.0/self_attn/o_proj"),
    ("add", "aten.add", "model/layers.0"),
    ("layer_norm_1", "aten.layer_norm", "model/layers.1/norm"),
    ("linear_2", "aten.linear", "model/layers.1/self_attn/q_proj"),
    ("softmax_1", "aten.softmax", "model/layers.1/self_attn"),
    ("mul_1", "aten.mul", "model/layers.1/self_attn"),
    ("linear_3", "aten.linear", "model/layers.1/self_attn/o_proj"),
    ("add_1", "aten.add", "model/layers.1"),
    ("linear_4", "aten.linear", "model/head"),
]
"""Each aten op's node id (its graph node), label and namespace."""


@pytest.fixture(scope="module")
def exported() -> torch.export.ExportedProgram:
    return torch.export.export(Tiny().eval(), (torch.randn(2, 8),))


@pytest.fixture(scope="module")
def pt2(exported: torch.export.ExportedProgram, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("graph_view") / "tiny.pt2"
    torch.export.save(exported, str(path))
    return path


def nodes_by_id(graphs: dict[str, Any]) -> dict[str, Any]:
    (graph,) = graphs["graphs"]
    ids = [n.id for n in graph.nodes]
    assert len(ids) == len(set(ids)), ids
    return {n.id: n for n in graph.nodes}


def output_attr(node: Any, output: int, key: str) -> str | None:
    return next((a.value for a in node.outputsMetadata[output].attrs if a.key == key), None)


def attr(node: Any, key: str) -> str | None:
    return next((a.value for a in node.attrs if a.key == key), None)


def sources(node: Any) -> list[tuple[str, str]]:
    return [(e.sourceNodeId, e.sourceNodeOutputId) for e in node.incomingEdges]


def check_edges(nodes: dict[str, Any]) -> None:
    """Every edge leaves an output its source has, and enters inputs 0, 1, ... in order."""
    for node in nodes.values():
        for i, edge in enumerate(node.incomingEdges):
            assert edge.sourceNodeId in nodes, (node.id, edge.sourceNodeId)
            assert int(edge.sourceNodeOutputId) < len(nodes[edge.sourceNodeId].outputsMetadata)
            assert edge.targetNodeInputId == str(i)


def test_pt2_nodes_sit_in_their_modules_namespaces(pt2: Path) -> None:
    nodes = nodes_by_id(MlxirAdapter().convert(str(pt2), {}))
    check_edges(nodes)
    for node_id, label, namespace in COMPUTE:
        assert (nodes[node_id].label, nodes[node_id].namespace) == (label, namespace), node_id
        assert output_attr(nodes[node_id], 0, "tensor_name") == node_id
        assert attr(nodes[node_id], "location", ).startswith(__file__)  # type: ignore[union-attr]
    weight = nodes["p_layers_1_self_attn_q_proj_weight"]
    assert (weight.label, weight.namespace) == ("mlx.weight", "model/layers.1/self_attn/q_proj")
    assert attr(weight, "global_name") == "@layers.1.self_attn.q_proj.weight"
    # the node torch decomposed (split → split_with_sizes) sits with its getitems
    split = nodes["getitem"]
    assert (split.label, split.namespace) == ("aten.split_with_sizes", "model")
    assert [output_attr(split, i, "tensor_name") for i in (0, 1)] == ["getitem", "getitem_1"]
    assert [output_attr(split, i, "tensor_shape") for i in (0, 1)] == ["float32[2, 2]"] * 2
    assert (nodes["x"].label, nodes["x"].namespace, output_attr(nodes["x"], 0, "tensor_shape")) == (
        "input", "", "float32[2, 8]"
    )
    assert sources(nodes["linear"]) == [
        ("layer_norm", "0"), ("p_layers_0_self_attn_q_proj_weight", "0"), ("p_layers_0_self_attn_q_proj_bias", "0")
    ]
    assert sources(nodes["add_1"]) == [("add", "0"), ("linear_3", "0")]
    assert sources(nodes["output"]) == [("getitem", "0"), ("getitem", "1")]
    assert attr(nodes["layer_norm"], "eps") == "1.000000e-05 : f64"
    graph = MlxirAdapter().convert(str(pt2), {})["graphs"][0]
    assert graph.groupNodeAttributes["model/layers.1/self_attn"] == {"module": f"{__name__}.Attention"}


def test_aten_mlir_keeps_the_namespaces_it_was_written_with(
    exported: torch.export.ExportedProgram, tmp_path: Path
) -> None:
    module, _ = import_with_scopes(exported)
    path = tmp_path / "tiny.mlir"
    path.write_text(str(module))
    nodes = nodes_by_id(convert(path))
    check_edges(nodes)
    for node_id, label, namespace in COMPUTE:
        assert (nodes[node_id].label, nodes[node_id].namespace) == (label, namespace), node_id
    assert sources(nodes["add_1"]) == [("add", "0"), ("linear_3", "0")]
    assert output_attr(nodes["getitem"], 1, "tensor_name") == "getitem_1"


def lowered(exported: torch.export.ExportedProgram) -> ModuleOp:
    module, _ = import_with_scopes(exported)
    lower(module)
    return module


def test_mlx_mlir_places_ops_by_the_weights_they_read(
    exported: torch.export.ExportedProgram, tmp_path: Path
) -> None:
    """Lowering drops `mlxir.scope`: a weight's global names its module, and a matmul
    reading one module's weights joins it; the rest sits at the top."""
    path = tmp_path / "tiny_mlx.mlir"
    path.write_text(str(lowered(exported)))
    nodes = nodes_by_id(convert(path))
    check_edges(nodes)
    by_label: dict[str, list[Any]] = {}
    for node in nodes.values():
        by_label.setdefault(node.label, []).append(node)
    assert [n.namespace for n in by_label["mlx.addmm"]] == [
        "model/layers.0/self_attn/q_proj", "model/layers.0/self_attn/o_proj",
        "model/layers.1/self_attn/q_proj", "model/layers.1/self_attn/o_proj", "model/head",
    ]
    assert [n.namespace for n in by_label["mlx.layer_norm"]] == ["model/layers.0/norm", "model/layers.1/norm"]
    assert {n.namespace for n in by_label["mlx.softmax"]} == {""}
    (split,) = by_label["mlx.split"]
    assert [output_attr(split, i, "tensor_shape") for i in (0, 1)] == ["float32[2, 2]"] * 2
    assert sources(nodes["output"]) == [(split.id, "0"), (split.id, "1")]


def test_mlxfb_instructions_are_nodes_and_slots_edges(
    exported: torch.export.ExportedProgram, tmp_path: Path
) -> None:
    path = tmp_path / "tiny.mlxfb"
    path.write_bytes(serialize(lowered(exported)))
    graphs = MlxirAdapter().convert(str(path), {})
    assert graphs["graphs"][0].id == "forward"
    nodes = nodes_by_id(graphs)
    check_edges(nodes)
    weight = nodes["layers.1.norm.bias"]
    assert (weight.label, weight.namespace) == ("parameter", "model/layers.1/norm")
    assert output_attr(weight, 0, "tensor_shape") == "float32[8]"
    addmms = [n for n in nodes.values() if n.label == "mlx.addmm"]
    assert [n.namespace for n in addmms][-1] == "model/head"
    assert all(attr(n, "location", ) for n in addmms)
    assert [output_attr(addmms[-1], 0, "tensor_shape")] == ["float32[2, 4]"]
    instructions = [n for n in nodes.values() if n.label.startswith("mlx.")]
    assert len(instructions) == 19
    assert len([n for n in instructions if n.label == "mlx.transpose"]) == 5  # the linears' w.T
    (split,) = [n for n in nodes.values() if n.label == "mlx.split"]
    assert sources(split) == [(addmms[-1].id, "0")]
    assert sources(nodes["output"]) == [(split.id, "0"), (split.id, "1")]


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("model.onnx", b"", "expected a .pt2, .mlir or .mlxfb file"),
        ("missing.pt2", None, "no such file"),
        ("bad.pt2", b"not a zip", "is not a torch.export archive"),
        ("bad.mlir", b"func.func @f() {\n  %x = mlx.nope\n}\n", "bad.mlir:3:1 Operation mlx.nope is not registered"),
        ("bad.mlxfb", b"0123456789abcdef", "not an .mlxfb program"),
    ],
)
def test_bad_input_is_a_one_line_error(
    tmp_path: Path, name: str, content: bytes | None, message: str
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(ValueError) as error:
        convert(path)
    assert message in str(error.value) and "\n" not in str(error.value), str(error.value)


# -- mlxir debug's overlay ---------------------------------------------------------


class AddBecomesSubtract(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.AddOp, rewriter: PatternRewriter) -> None:
        rewriter.replace(op, mlx.SubtractOp.build(operands=list(op.operands), result_types=[op.results[0].type]))


@dataclass(frozen=True)
class BreakAddPass(ModulePass):
    """A miscompile on purpose: a linear's bias add (and the residual adds) subtract."""

    name = "test-graph-view-break-add"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(AddBecomesSubtract()).rewrite_module(op)


def test_the_overlay_colours_each_node_by_its_verdict(
    exported: torch.export.ExportedProgram, pt2: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(PASSES, BreakAddPass.name, PassEntry(lambda: BreakAddPass, "breaks adds"))
    report = compare(exported, torch.randn(2, 8), pipeline=f"convert-aten-to-mlx,canonicalize,{BreakAddPass.name}")
    assert report.first_divergence is not None and report.first_divergence.node == "linear"
    path = write_overlay(report, tmp_path / "overlay.json")
    data = json.loads(path.read_text())
    results = data["forward"]["results"]
    assert data["forward"]["name"] == "mlxir debug: max_abs_error"
    assert results["layer_norm"]["bgColor"] == WITHIN_COLOR and results["layer_norm"]["value"] < 1e-4
    assert results["linear"] == {
        "value": report.first_divergence.max_abs_error, "bgColor": FIRST_DIVERGENCE_COLOR, "textColor": "white"
    }
    # every key names a node of the .pt2's graph, by id or by an output's tensor name
    nodes = nodes_by_id(convert(pt2))
    names = set(nodes) | {output_attr(n, i, "tensor_name") for n in nodes.values() for i in range(len(n.outputsMetadata))}
    assert set(results) == {c.node for c in report.nodes} and set(results) <= names
    assert overlay_of(report, "cosine")["forward"]["results"]["layer_norm"]["value"] > 0.9999
    with pytest.raises(ValueError, match="unknown metric 'speed'"):
        overlay_of(report, "speed")


# -- the page Model Explorer serves, in headless Chromium ---------------------------

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def find_chromium() -> str | None:
    return next((found for name in CHROMIUM_NAMES if (found := shutil.which(name))), None)


class DevTools:
    """Chromium driven over `--remote-debugging-pipe` (DevTools messages, NUL-separated,
    on fds 3 and 4), which needs no client library."""

    def __init__(self, executable: str, width: int = 1280, height: int = 800) -> None:
        commands_read, commands_write = os.pipe()
        answers_read, answers_write = os.pipe()

        def child() -> None:
            ours = os.dup(commands_read), os.dup(answers_write)
            os.dup2(ours[0], 3)
            os.dup2(ours[1], 4)

        self.process = subprocess.Popen(
            [executable, "--headless", "--no-sandbox", "--remote-debugging-pipe", "--no-first-run",
             "--enable-unsafe-swiftshader", f"--window-size={width},{height}", "about:blank"],
            preexec_fn=child, pass_fds=(3, 4), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        os.close(commands_read)
        os.close(answers_write)
        self.commands, self.answers = commands_write, answers_read
        self.pending = b""
        self.last_id = 0
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]

    def send(self, method: str, params: dict[str, Any] | None = None, timeout: float = 30) -> dict[str, Any]:
        self.last_id += 1
        message: dict[str, Any] = {"id": self.last_id, "method": method, "params": params or {}}
        if hasattr(self, "session"):
            message["sessionId"] = self.session
        os.write(self.commands, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            while b"\0" in self.pending:
                raw, self.pending = self.pending.split(b"\0", 1)
                answer = json.loads(raw)
                if answer.get("id") == self.last_id:
                    assert "error" not in answer, f"{method}: {answer['error']}"
                    return answer["result"]
            left = deadline - time.monotonic()
            assert left > 0, f"Chromium did not answer {method} in {timeout}s"
            if select.select([self.answers], [], [], left)[0]:
                chunk = os.read(self.answers, 1 << 20)
                assert chunk, "Chromium exited"
                self.pending += chunk

    def evaluate(self, expression: str) -> Any:
        return self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})["result"].get("value")

    def close(self) -> None:
        self.process.kill()
        self.process.wait()
        os.close(self.commands)
        os.close(self.answers)


def png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and the rows of an 8-bit RGB(A) PNG, unfiltered."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    position, chunks, header = 8, b"", b""
    while position < len(data):
        length = int.from_bytes(data[position:position + 4], "big")
        kind = data[position + 4:position + 8]
        body = data[position + 8:position + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            chunks += body
        position += 12 + length
    width, height = int.from_bytes(header[0:4], "big"), int.from_bytes(header[4:8], "big")
    assert header[8] == 8 and header[9] in (2, 6) and header[12] == 0, "8-bit RGB(A), not interlaced"
    channels = 4 if header[9] == 6 else 3
    raw, stride = zlib.decompress(chunks), width * channels
    rows: list[bytes] = []
    previous = bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            left = line[x - channels] if x >= channels else 0
            up, corner = previous[x], previous[x - channels] if x >= channels else 0
            if kind == 1:
                line[x] = (line[x] + left) & 255
            elif kind == 2:
                line[x] = (line[x] + up) & 255
            elif kind == 3:
                line[x] = (line[x] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[x] = (line[x] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        rows.append(bytes(line[x] for i in range(0, stride, channels) for x in range(i, i + 3)))
        previous = line
    return width, height, rows


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def test_model_explorer_shows_the_graph_in_chromium(
    exported: torch.export.ExportedProgram, pt2: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server (`python -m mlxir.interop.model_explorer`) with the overlay; the page,
    once it has asked the adapter for the graph, counts its nodes and layers, lists the
    overlay with values matched to nodes, and draws the graph (input → model → output)
    with the overlay's colours on it."""
    chromium = find_chromium()
    if chromium is None:
        pytest.skip(f"no Chromium found ({', '.join(CHROMIUM_NAMES)}): `make chromium` installs it")
    monkeypatch.setitem(PASSES, BreakAddPass.name, PassEntry(lambda: BreakAddPass, "breaks adds"))
    report = compare(exported, torch.randn(2, 8), pipeline=f"convert-aten-to-mlx,{BreakAddPass.name}")
    overlay = write_overlay(report, tmp_path / "overlay.json")
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "mlxir.interop.model_explorer", str(pt2), "--node-data", str(overlay),
         "--port", str(port), "--no-browser"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path,
    )
    browser = None
    try:
        assert server.stdout is not None
        url, printed, deadline = None, [], time.monotonic() + 120
        while url is None and time.monotonic() < deadline:
            line = server.stdout.readline()
            assert line, "the server exited:\n" + "".join(printed)
            printed.append(line)
            if line.startswith(f"http://localhost:{port}/"):
                url = line.strip()
        assert url is not None, "".join(printed)
        browser = DevTools(chromium)
        browser.send("Page.navigate", {"url": url})
        text, deadline = "", time.monotonic() + 60
        while "layer count" not in text and time.monotonic() < deadline:
            time.sleep(0.5)
            text = browser.evaluate("document.body.innerText") or ""
        time.sleep(1)  # the graph is laid out and drawn after the counts show
        text = browser.evaluate("document.body.innerText") or ""
        nodes = nodes_by_id(convert(pt2))
        layers = {"/".join(n.namespace.split("/")[:i]) for n in nodes.values() for i in range(1, n.namespace.count("/") + 2) if n.namespace}
        assert re.search(rf"op node count\s+{len(nodes)}\b", text), text
        assert re.search(rf"layer count\s+{len(layers)}\b", text), text
        assert "tiny.pt2" in text and "forward" in text and "mlxir debug: max_abs_error" in text, text
        screenshot = base64.b64decode(browser.send("Page.captureScreenshot", {"format": "png"})["data"])
        (tmp_path / "page.png").write_bytes(screenshot)
        width, height, rows = png_pixels(screenshot)
        assert width >= 1000 and height >= 600, (width, height)
        # left of the side panel, below the toolbar, above the legend
        graph_area = [row[x * 3:x * 3 + 3] for row in rows[110:height - 120] for x in range(140, 880, 2)]
        dark = sum(1 for p in graph_area if max(p) < 100)
        colours = {p for p in graph_area}
        assert dark > 200 and len(colours) > 20, (dark, len(colours))
        # the overlay on the collapsed `model` layer: its nodes' colours, the first
        # divergence's among them; and the values matched to nodes in the side table
        red = tuple(int(FIRST_DIVERGENCE_COLOR[i:i + 2], 16) for i in (1, 3, 5))
        assert any(all(abs(c - r) < 8 for c, r in zip(p, red)) for p in colours), "no overlay colour drawn"
        assert re.search(r"aten\.linear\s+0\.\d+", text), text
    finally:
        if browser is not None:
            browser.close()
        server.kill()
        server.wait()
        if server.stdout is not None:
            server.stdout.close()


# -- view-op-graph ------------------------------------------------------------------

PROGRAM = """
mlx.global @w "parameter" : tensor<8xf32> = dense<1.0> : tensor<8xf32>
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2xf32> {
  %w = mlx.weight @w : tensor<8xf32>
  %y = mlx.add %x, %w : tensor<2x8xf32>, tensor<8xf32> -> tensor<2x8xf32> loc("m.py":4:2)
  %s = mlx.sum %y axes [1] : tensor<2x8xf32> -> tensor<2xf32>
  func.return %s : tensor<2xf32>
}
"""

STATEMENT = re.compile(
    r'(?:(?P<edge>v\d+) -> (?P<head>v\d+) \[(?P<edge_attrs>[^\]]*)\];'
    r'|(?P<node>v\d+) \[label = "(?:[^"\\]|\\.)*"(?:, \w+ = \w+)*\];'
    r"|subgraph (?P<cluster>cluster_\d+) \{|label = \"(?:[^\"\\]|\\.)*\";|compound = true;|\}|digraph G \{)$"
)


def dot_statements(dot: str) -> tuple[set[str], set[str], list[tuple[str, str, str]]]:
    """The nodes, clusters and edges of a DOT text as view-op-graph writes it, each
    line checked against the grammar it uses and the braces balanced."""
    nodes: set[str] = set()
    clusters: set[str] = set()
    edges: list[tuple[str, str, str]] = []
    depth = 0
    for line in dot.splitlines():
        match = STATEMENT.fullmatch(line.strip())
        assert match, f"not a DOT statement: {line!r}"
        depth += line.count("{") - line.count("}") if match["node"] is None else 0
        if match["node"]:
            nodes.add(match["node"])
        if match["cluster"]:
            clusters.add(match["cluster"])
        if match["edge"]:
            edges.append((match["edge"], match["head"], match["edge_attrs"]))
        assert depth >= 0
    assert depth == 0
    return nodes, clusters, edges


def module() -> ModuleOp:
    return Parser(make_context(), PROGRAM).parse_module()


def test_the_dot_is_well_formed_and_draws_each_use() -> None:
    nodes, clusters, edges = dot_statements(op_graph_dot(module()))
    assert len(clusters) == 4  # the module, the func, and their regions
    for tail, head, attributes in edges:
        assert tail in nodes and head in nodes
        for cluster in re.findall(r"l(?:head|tail) = (cluster_\d+)", attributes):
            assert cluster in clusters
    # arg0 and the weight into the add, the add into the sum, the sum into the return
    assert len([e for e in edges if "solid" in e[2]]) == 4
    dot = shutil.which("dot")
    if dot is not None:  # Graphviz's own parser too, where it is installed
        run = subprocess.run([dot, "-Tsvg"], input=op_graph_dot(module()), capture_output=True, text=True)
        assert run.returncode == 0 and "<svg" in run.stdout, run.stderr


def test_options_choose_the_labels_and_edges() -> None:
    bare = op_graph_dot(module(), GraphOptions(print_attrs=False, print_result_types=False,
                                               print_control_flow_edges=True, print_debug_info=True))
    assert '[label = "mlx.add\\nm.py:4:2", shape = ellipse];' in bare
    _, _, edges = dot_statements(bare)
    assert len([e for e in edges if "dashed" in e[2]]) == 4  # global → func, weight → add → sum → return
    short = op_graph_dot(module(), GraphOptions(max_label_len=5))
    assert "global_name: @w\\ntenso..." in short
    none = op_graph_dot(module(), GraphOptions(print_data_flow_edges=False))
    assert not re.search(r"v\d+ -> v\d+", none) and "arg0" not in none


def test_the_pass_prints_the_dot_and_passes_the_ir_on(tmp_path: Path) -> None:
    source = tmp_path / "m.mlir"
    source.write_text(PROGRAM)
    out = tmp_path / "out.mlir"
    run = subprocess.run(
        [str(Path(sys.executable).parent / "mlx-opt"), str(source), "-p", "view-op-graph{max-label-len=8}", "-o", str(out)],
        capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 0, run.stderr
    dot_statements(run.stdout)
    assert str(Parser(make_context(), out.read_text()).parse_module()) == str(module())
