"""Generate docs/api.md from the live package (run from the repository root: python docs/gen_api.py).

Signatures come from ``inspect`` and summaries from the first docstring
line, so the reference cannot drift from the code. Sections follow the
public API contract.
"""

from __future__ import annotations

import inspect
import pathlib
import re

import strideweave as sw
from strideweave import random as sw_random
from strideweave import testing as sw_testing
from strideweave import viz as sw_viz

SECTIONS = [
    ("1. Layouts", "strideweave.layout, re-exported at top level.",
     [sw.Shape, sw.Stride, sw.Layout]),
    ("2. DTypes", "strideweave.dtypes. Only `DType.Float32` is differentiable.",
     [sw.DType, sw.SimpleDType, sw.DTypeCategory, sw.CompoundDType]),
    ("3. Carriers", "strideweave.carriers: flat, typed storage buffers, one per Array API namespace.",
     [sw.Carrier, sw.NumpyCarrier, sw.TorchCarrier, sw.JaxCarrier, sw.ArrayAPICarrier,
      sw.set_default_carrier, sw.get_default_carrier]),
    ("4. Tensors", "strideweave.tensor and creation functions.",
     [sw.Tensor, sw.tensor, sw.zeros, sw.ones, sw.full, sw.arange, sw.from_dlpack,
      sw_random.normal, sw_random.uniform]),
    ("5. Operations", ("strideweave.operation and strideweave.ops. Every function is differentiable where "
     "its dtype allows; most are also Tensor methods or operators."),
     [sw.Operation, sw.ExecutionOptions,
      sw.add, sw.subtract, sw.multiply, sw.divide, sw.negative, sw.power, sw.exp, sw.log, sw.sqrt, sw.sin,
      sw.cos, sw.tanh, sw.abs, sw.maximum, sw.minimum, sw.less, sw.less_equal, sw.greater, sw.greater_equal,
      sw.equal, sw.not_equal, sw.where, sw.clip, sw.sum, sw.mean, sw.max, sw.min, sw.prod, sw.matmul,
      sw.tensordot, sw.concat, sw.stack, sw.astype, sw.copy, sw.detach, sw.view, sw.permute, sw.transpose,
      sw.reshape, sw.broadcast_to]),
    ("6. Autograd", ("Fixed by the autograd specification; `Tensor.backward`, `Tensor.grad`, "
     "`Tensor.retain_grad` and `Tensor.backwards_traversal` are listed with Tensor above."),
     [sw.grad, sw.is_grad_enabled, sw.set_grad_enabled, sw.no_grad]),
    ("7. Tools for library authors", "strideweave.testing.",
     [getattr(sw_testing, n) for n in getattr(sw_testing, "__all__", ())]),
    ("8. Pictures", "strideweave.viz (import it explicitly: `from strideweave import viz`).",
     [getattr(sw_viz, n) for n in sw_viz.__all__]),
    ("9. Interop with native autograd", ("strideweave.interop (`sw.interop`): StrideWeave functions inside "
     "torch.autograd and JAX, native torch / JAX functions inside StrideWeave graphs. See docs/interop.md."),
     [getattr(sw.interop, n) for n in sw.interop.__all__]),
]


def qualified(obj) -> str:
    module = obj.__module__ or ""
    if module.rsplit(".", 1)[-1].startswith("_"):
        module = module.rsplit(".", 1)[0]  # a private module's names are documented where they are exported
    if (module == "strideweave" or module.startswith("strideweave.")) and getattr(sw, obj.__name__, None) is obj:
        return f"sw.{obj.__name__}"
    short = module.replace("strideweave.", "sw.", 1) if module.startswith("strideweave") else module
    return f"{short}.{obj.__qualname__}"


def summary(obj) -> str:
    doc = inspect.getdoc(obj) or ""
    return doc.split("\n\n")[0].replace("\n", " ").strip() or "(no docstring)"


def signature(obj, name: str, method: bool = False) -> str:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return name
    params = [p for p in sig.parameters.values() if p.name not in ("self", "cls")]
    if method and params and next(iter(sig.parameters)) not in ("self", "cls"):
        params = params[1:]  # a free function attached as a method (the layout algebra): its first argument is self
    sig = sig.replace(parameters=params)
    if inspect.isclass(obj) or sig.return_annotation in (None, "None"):
        sig = sig.replace(return_annotation=inspect.Signature.empty)
    text = str(sig)
    text = re.sub(r"\"'([^']*)'\"", r"\1", text)   # "'Tensor'" -> Tensor (postponed annotations)
    text = re.sub(r"'([^']*)'", r"\1", text) if "=" not in text else re.sub(r":\s*'([^']*)'", r": \1", text)
    text = re.sub(r"->\s*'([^']*)'", r"-> \1", text)
    return f"{name}{text}"


FALLBACK = {"__getitem__": "Indexing: one int or slice per top-level mode; a differentiable view.",
            "__call__": "Offset of a coordinate."}


def member_summary(cls, name: str, member) -> str:
    text = summary(member)
    if text != "(no docstring)":
        return text
    if name in FALLBACK:
        return FALLBACK[name]
    if cls is sw.Tensor and callable(getattr(sw, name, None)) and not inspect.isclass(getattr(sw, name)):
        return f"Method form of `sw.{name}`."
    for base in cls.__mro__[1:]:
        inherited = getattr(base, name, None)
        if inherited is not None and summary(inherited) != "(no docstring)":
            return summary(inherited)
    return ""


def members(cls) -> list[str]:
    lines = []
    for name, member in sorted(vars(cls).items()):
        if name.startswith("_") and name not in ("__call__", "__getitem__"):
            continue
        if isinstance(member, property):
            head, text = f"`{name}` (property)", member_summary(cls, name, member)
        elif isinstance(member, (staticmethod, classmethod)):
            func = member.__func__
            head, text = f"`{signature(func, name)}` ({type(member).__name__})", member_summary(cls, name, func)
        elif inspect.isfunction(member):
            head, text = f"`{signature(member, name, method=True)}`", member_summary(cls, name, member)
        else:
            continue
        lines.append(f"  - {head}: {text}" if text else f"  - {head}")
    return lines


def entry(obj) -> list[str]:
    name = qualified(obj)
    if inspect.isclass(obj):
        lines = [f"- **`{signature(obj, name)}`** (class): {summary(obj)}"]
        if obj is sw.DType:
            lines.append("  - descriptors: " + ", ".join(
                f"`{k}`" for k, v in vars(obj).items() if not k.startswith("_") and not callable(v)))
            return lines
        return lines + members(obj)
    return [f"- **`{signature(obj, name)}`**: {summary(obj)}"]


def render() -> str:
    out = ["# API reference", "",
           "Generated from the installed package by `docs/gen_api.py`; regenerate it after changing a",
           "public signature or docstring. `import strideweave as sw` throughout. The behaviour behind",
           "these names is described in the [user guide](user-guide.md) and the [layout guide](layouts.md).",
           ""]
    for title, blurb, objects in SECTIONS:
        out += [f"## {title}", "", blurb, ""]
        if not objects:
            out += ["(nothing public yet)", ""]
            continue
        for obj in objects:
            out += entry(obj)
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    path = pathlib.Path(__file__).resolve().parent / "api.md"
    path.write_text(render())
    print(f"wrote {path}")
