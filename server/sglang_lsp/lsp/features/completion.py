"""Completion of flag names (after ``-``/``--`` inside a launch command, or as a key of an sglang
``--config`` YAML file) and of the choices of a choice flag (after the flag, after ``--flag=``,
or after ``key:`` in a config file). Nothing inside comments or outside launch commands."""

from __future__ import annotations

import re

from lsprotocol import types

from ...catalog.catalog import Catalog, Option, load_catalog
from ...base.findings import CheckError
from ...engine.check import Result
from .. import convert
from .context import config_parses, is_local, server_invocations
from .hover import default_text, option_facts, value_kind

_PREFIX = re.compile(r"[^\s\"'\[\](){},]*\Z")
_CONTINUATION_GAP = re.compile(rb"(?:[ \t]|\\\r?\n)*\Z")  # shell: spaces and `\`-newlines
_YAML_ITEM_GAP = re.compile(rb"[ \t]*(?:\r?\n[ \t]*)*(?:-[ \t]*)?\Z")  # YAML: a new `- ` item below
_YAML_KEY = re.compile(r"^([A-Za-z0-9_-]*)\Z")
_YAML_VALUE = re.compile(r"^([A-Za-z0-9_-]+)[ \t]*:[ \t]*['\"]?([^\s'\"]*)\Z")


def _in_comment(result: Result, offset: int, line_before: str) -> bool:
    tree = result.tree
    if tree is not None and result.document.language == "shell":
        node = tree.root_node.descendant_for_byte_range(max(offset - 1, 0), max(offset - 1, 0))
        while node is not None:
            if node.type == "comment":
                return True
            node = node.parent
        return False
    # YAML (and shell without a tree): a `#` that starts a word outside quotes
    unquoted = re.sub(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"", "", line_before)
    return re.search(r"(^|\s)#", unquoted) is not None


_TOP_KEY = re.compile(r"^([A-Za-z0-9_-]+)[ \t]*:", re.M)


def _looks_like_config(text: str, cat: Catalog) -> bool:
    """Most top-level keys are sglang options (for completion only, never for diagnostics)."""
    keys = _TOP_KEY.findall(text.split("\n---", 1)[0])
    return bool(keys) and sum(1 for k in keys if cat.config_key(k) is not None) * 2 > len(keys)


def _subsequence(needle: str, hay: str) -> bool:
    it = iter(hay)
    return all(ch in it for ch in needle)


def _flag_items(cat: Catalog, prefix: str, rng: types.Range | None, key_style: bool) -> list[types.CompletionItem]:
    """One item per long option string. With ``rng`` ``None`` the edit range and the data are
    the list's ``itemDefaults`` (much smaller: the list names every flag of the catalog)."""
    items = []
    want = prefix.lstrip("-").replace("_", "-")
    for spelling in cat.long_names():
        opt = cat.lookup(spelling)
        if opt is None or opt.action == "help":
            continue
        label = spelling[2:] if key_style else spelling
        if key_style and (spelling.startswith("--no-") or not opt.config):
            continue
        if want and not _subsequence(want, spelling[2:]):
            continue
        canonical = spelling == opt.name
        deprecated = opt.deprecated or opt.rejects
        detail = value_kind(opt)
        if not opt.is_switch:
            detail += f" · default {default_text(opt).split(' (')[0]}"
        if not canonical:
            detail = f"alias of {opt.name} · " + detail
        items.append(types.CompletionItem(
            label=label,
            kind=types.CompletionItemKind.Property,
            detail=detail,
            data=None if rng is None else _data(cat, key_style),  # documentation on resolve
            sort_text=("2" if deprecated else "0" if canonical else "1") + label,
            tags=[types.CompletionItemTag.Deprecated] if deprecated else None,
            text_edit=None if rng is None else types.TextEdit(range=rng, new_text=label),
        ))
    return items


def _data(cat: Catalog, key_style: bool) -> dict:
    return {"sglangVersion": cat.sglang_version, "keyStyle": key_style}


def _flag_list(cat: Catalog, prefix: str, rng: types.Range, key_style: bool, defaults: bool) -> types.CompletionList:
    if defaults:
        return types.CompletionList(is_incomplete=False, items=_flag_items(cat, prefix, None, key_style),
                                    item_defaults=types.CompletionItemDefaults(edit_range=rng, data=_data(cat, key_style)))
    return types.CompletionList(is_incomplete=False, items=_flag_items(cat, prefix, rng, key_style))


def resolve(item: types.CompletionItem, markdown: bool) -> types.CompletionItem:
    """``completionItem/resolve``: the documentation of a flag item (kept out of the list itself,
    which names every flag of the catalog)."""
    data = item.data if isinstance(item.data, dict) else {}
    try:
        cat = load_catalog(data.get("sglangVersion"))
    except CheckError:
        return item
    opt = cat.lookup(("--" if data.get("keyStyle") else "") + item.label)
    if opt is not None:
        item.documentation = convert.markup("  \n".join(option_facts(opt, cat)), markdown)
    return item


def _choice_items(opt: Option, rng: types.Range) -> list[types.CompletionItem]:
    items = []
    for i, choice in enumerate(opt.choices or ()):
        text = str(choice)
        items.append(types.CompletionItem(
            label=text,
            kind=types.CompletionItemKind.EnumMember,
            detail=f"{opt.name}" + (" · default" if str(opt.default) == text else ""),
            sort_text=f"{i:04d}",
            text_edit=types.TextEdit(range=rng, new_text=text),
        ))
    return items


def _lookup_flag(cat: Catalog, text: str | None) -> Option | None:
    if not text or not text.startswith("-"):
        return None
    opt = cat.lookup(text)
    if opt is None and text.startswith("--"):
        matches = cat.prefix_matches(text)
        opt = cat.lookup(matches[0]) if len(matches) == 1 else None
    return opt


def completion(result: Result, offset: int, encoding: str, cat: Catalog,
               item_defaults: bool = False) -> types.CompletionList | None:
    """``item_defaults``: the client supports ``CompletionList.itemDefaults`` (editRange, data)."""
    doc = result.document
    offset = max(0, min(offset, len(doc.data)))
    line = doc.line_of(offset)
    line_start, _ = doc.line_span(line)
    before = doc.slice(line_start, offset)
    if _in_comment(result, offset, before):
        return None
    prefix = _PREFIX.search(before).group(0)
    prefix_start = offset - len(prefix.encode("utf-8", "surrogateescape"))

    def rng(start: int) -> types.Range:
        return convert.byte_range(doc, start, offset, encoding)

    # inside a launch command?
    for inv, _parsed in server_invocations(result):
        if inv.kind != "server" or not is_local(inv.span, doc) or inv.span.start > prefix_start:
            continue
        if inv.program and is_local(inv.program[-1].span, doc) and prefix_start < inv.program[-1].span.end:
            continue
        gap = _YAML_ITEM_GAP if doc.language == "yaml" else _CONTINUATION_GAP
        if offset > inv.span.end and not gap.match(doc.data[inv.span.end:prefix_start]):
            continue
        if prefix.startswith("-") and "=" not in prefix:
            return _flag_list(cat, prefix, rng(prefix_start), False, item_defaults)
        if prefix.startswith("--") and "=" in prefix:
            flag, _, value = prefix.partition("=")
            opt = _lookup_flag(cat, flag)
            if opt is None or opt.choices is None:
                return None
            return types.CompletionList(is_incomplete=False, items=_choice_items(
                opt, rng(offset - len(value.encode("utf-8", "surrogateescape")))))
        previous = [w for w in inv.args if is_local(w.span, doc) and w.span.end <= prefix_start
                    and w.origin in ("shell", "yaml")]
        if not previous:
            return None
        opt = _lookup_flag(cat, previous[-1].text)
        if opt is None or opt.choices is None or opt.is_switch:
            return None
        return types.CompletionList(is_incomplete=False, items=_choice_items(opt, rng(prefix_start)))

    # a YAML document checked as an sglang --config file (or one that is while a key is being
    # typed and the file does not parse): keys and their choices
    if doc.language == "yaml" and (config_parses(result) or _looks_like_config(doc.text, cat)):
        m = _YAML_KEY.match(before)
        if m:
            return _flag_list(cat, prefix, rng(prefix_start), True, item_defaults)
        m = _YAML_VALUE.match(before)
        if m:
            opt = cat.config_key(m.group(1))
            if opt is None or opt.choices is None:
                return None
            value = m.group(2)
            return types.CompletionList(is_incomplete=False, items=_choice_items(
                opt, rng(offset - len(value.encode("utf-8", "surrogateescape")))))
    return None
