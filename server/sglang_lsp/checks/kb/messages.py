"""Message templates of knowledge-base rules: ``{args.moe_runner_backend}``, ``{effective.x}`` …
replaced by the launch's values.

A value the file cannot tell never shows as a placeholder or a ``?``:

* an ``effective.*`` value sglang would derive (from the checkpoint, the GPU …) that cannot be
  derived here is taken from the flag when the launch writes it (``--quantization w8a8_int8``
  on an unknown checkpoint: the message names ``w8a8_int8``);
* what is still unknown is worded around: a flag's value in ``` `--flag {x}` ``` is left out
  (``--flag`` alone), a parenthesis or a later ``;`` clause that only states the unknown value
  is dropped, and anything else reads as a short description of what it stands for (``the
  target GPU``).

A fix's value is rendered by :func:`render_value`, which gives ``None`` instead: a fix never
writes a description into a file.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Sequence

from . import conditions
from .effective import LaunchResolver
from ...base.unknown import UNKNOWN


_TEMPLATE = re.compile(r"\{([a-z]+\.[A-Za-z0-9_]+)\}")

# effective.<field> whose flag stores to another name
_FLAG_OF_EFFECTIVE = {"server_quantization": "quantization"}

# how an unknown value reads in a sentence, where the words around it do not say it already
_DESCRIBED = {
    "gpu.name": "the target GPU",
    "gpu.sm": "its compute capability",
    "model.quant_method": "its own method",
    "model.arch": "this architecture",
    "model.context_length": "the model's maximum",
    "effective.quantization": "the chosen quantization method",
    "effective.server_quantization": "the chosen quantization method",
    "args.quantization": "the chosen quantization method",
    "effective.chunked_prefill_size": "as many",
}
_QUANTIZATION_NAMES = ("effective.quantization", "effective.server_quantization", "args.quantization")


def template_names(text: str) -> list[str]:
    return _TEMPLATE.findall(text)


def _show(v: Any) -> str:
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _value(name: str, r: LaunchResolver) -> Any:
    """The value of ``name`` for this launch; an ``effective.*`` value that is unknown falls back to
    the flag's own value when the launch writes the flag."""
    value = r.value(name)
    ns, _, field = name.partition(".")
    if value is UNKNOWN and ns == "effective":
        dest = _FLAG_OF_EFFECTIVE.get(field, field)
        if r.cat.has_dest(dest) and r.parsed.is_explicit(dest):
            value = r.arg(dest)
    return value


def describe(name: str, r: LaunchResolver | None = None) -> str:
    """What an unknown ``name`` reads as: the table's words; else, for ``args.<dest>``, the value
    of the flag that stores to it (``the `--attention-backend` value``); else its field's words
    (``the attn dp size`` for ``effective.attn_dp_size``)."""
    if name in _DESCRIBED:
        return _DESCRIBED[name]
    ns, _, field = name.partition(".")
    if ns == "args" and r is not None:
        options = r.cat.by_dest.get(field) if r.cat.has_dest(field) else None
        if options:
            return f"the `{options[-1].name}` value"
    return "the " + field.replace("_", " ")


def render(text: str, r: LaunchResolver) -> str:
    """``text`` with every placeholder replaced by its value for this launch (see the module's
    docstring for what an unknown value becomes). A name no resolver knows stays as written
    (a rule's own mistake, which tests/test_kb_rules.py catches)."""
    known: dict[str, str] = {}
    unknown: set[str] = set()
    for name in set(_TEMPLATE.findall(text)):
        try:
            value = _value(name, r)
        except conditions.ConditionError:
            continue
        if value is UNKNOWN:
            unknown.add(name)
        else:
            known[name] = _show(value)
    if unknown:
        text = _worded_around(text, unknown, r)
    return _TEMPLATE.sub(lambda m: known.get(m.group(1), m.group(0)), text)


def render_value(text: str, r: LaunchResolver) -> str | None:
    """A fix's value with its placeholders filled in; ``None`` when one of them is unknown."""
    out = []
    pos = 0
    for m in _TEMPLATE.finditer(text):
        try:
            value = _value(m.group(1), r)
        except conditions.ConditionError:
            return None
        if value is UNKNOWN:
            return None
        out += [text[pos:m.start()], _show(value)]
        pos = m.end()
    return "".join(out) + text[pos:]


def _worded_around(text: str, unknown: set[str], r: LaunchResolver) -> str:
    """``text`` reworded so that none of the ``unknown`` names shows (each rule in turn)."""
    def any_unknown(fragment: str) -> bool:
        return any(n in unknown for n in _TEMPLATE.findall(fragment))

    # `--flag {x}`: the flag alone
    text = re.sub(r"`(--[A-Za-z0-9-]+) \{([a-z]+\.\w+)\}`",
                  lambda m: f"`{m.group(1)}`" if m.group(2) in unknown else m.group(0), text)
    # a parenthesis that states an unknown value: dropped
    text = re.sub(r" ?\(([^()]*)\)", lambda m: "" if any_unknown(m.group(1)) else m.group(0), text)
    # a later clause that states an unknown value: dropped
    clauses = text.split("; ")
    text = "; ".join([clauses[0]] + [c for c in clauses[1:] if not any_unknown(c)])
    # {a} / {b} <things>: a share of the <things>
    text = re.sub(r"\{([a-z]+\.\w+)\} / \{([a-z]+\.\w+)\} ",
                  lambda m: "a share of the " if m.group(1) in unknown or m.group(2) in unknown else m.group(0), text)
    # compute capability {x} or newer: a newer compute capability
    text = re.sub(r"compute capability \{([a-z]+\.\w+)\} or newer",
                  lambda m: "a newer compute capability" if m.group(1) in unknown else m.group(0), text)
    # `{quantization}` quantization: the chosen quantization
    text = re.sub(r"`\{([a-z]+\.\w+)\}` quantization",
                  lambda m: "the chosen quantization" if m.group(1) in unknown and m.group(1) in _QUANTIZATION_NAMES
                  else m.group(0), text)
    # anything else: described, out of the backticks a value would stand in
    text = re.sub(r"`\{([a-z]+\.\w+)\}`", lambda m: describe(m.group(1), r) if m.group(1) in unknown else m.group(0),
                  text)
    return _TEMPLATE.sub(lambda m: describe(m.group(1), r) if m.group(1) in unknown else m.group(0), text)


def render_on_gpus(text: str, r: LaunchResolver, on_gpus: Callable[[], Sequence[LaunchResolver]]) -> str:
    """``text`` for a launch whose GPU is not named exactly (``r``), of a rule that holds on every
    GPU it may run on (``on_gpus()``: the launch on each of them). A ``gpu.*`` or ``effective.*``
    name unknown for the launch is shown as it is on those GPUs: the value they agree on, else
    the values one after the other (``80, 89 or 90``), and the GPU's name as "any GPU". Every
    other name is rendered by :func:`render`."""
    # what the GPUs agree on filled in first; what is still unknown is then worded around
    return render(_filled_on_gpus(text, r, on_gpus, _on_each), r)


def render_value_on_gpus(text: str, r: LaunchResolver, on_gpus: Callable[[], Sequence[LaunchResolver]]) -> str | None:
    """:func:`render_value` for a launch whose GPU is not named exactly: a ``gpu.*`` or
    ``effective.*`` name unknown for the launch takes the value every GPU it may run on agrees
    on; ``None`` when they differ (a fix writes one value or none)."""
    return render_value(_filled_on_gpus(text, r, on_gpus, _agreed), r)


def _filled_on_gpus(text: str, r: LaunchResolver, on_gpus: Callable[[], Sequence[LaunchResolver]],
                    shown_on: Callable[[str, Sequence[LaunchResolver]], str | None]) -> str:
    """``text`` with each ``gpu.*`` or ``effective.*`` name unknown for the launch ``r`` replaced
    by ``shown_on(name, the launch on each GPU)`` where that is not ``None`` (``on_gpus()`` is
    called once, when first needed)."""
    resolvers: list[Sequence[LaunchResolver]] = []

    def sub(m: re.Match) -> str:
        name = m.group(1)
        if name.startswith(("gpu.", "effective.")):
            try:
                if _value(name, r) is UNKNOWN:
                    if not resolvers:
                        resolvers.append(on_gpus())
                    shown = shown_on(name, resolvers[0])
                    if shown is not None:
                        return shown
            except conditions.ConditionError:
                pass
        return m.group(0)

    return _TEMPLATE.sub(sub, text)


def _agreed(name: str, resolvers: Sequence[LaunchResolver]) -> str | None:
    """The value of ``name`` every GPU's launch agrees on, shown; ``None`` when they differ or one
    does not know it."""
    shown: set[str] = set()
    for each in resolvers:
        v = each.value(name)
        if v is UNKNOWN:
            return None
        shown.add(_show(v))
    return shown.pop() if len(shown) == 1 else None


def _on_each(name: str, resolvers: Sequence[LaunchResolver]) -> str | None:
    shown: list[str] = []
    for each in resolvers:
        v = each.value(name)
        if v is UNKNOWN:
            return None
        if _show(v) not in shown:
            shown.append(_show(v))
    if not shown:
        return None
    if len(shown) == 1:
        return shown[0]
    if name == "gpu.name":
        return "any GPU"
    return ", ".join(shown[:-1]) + " or " + shown[-1]
