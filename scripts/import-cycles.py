#!/usr/bin/env python3
"""Fails if a module of a crate imports a module above it: one that (through imports, or as the
module that declares it) leads back to the importer, or one of a later layer.

For each module file of the crates given (default: common, xtask, grader), every `crate::m`
path (in `use` lines and in code) is an edge to module `m`; a path through the crate root's
re-exports (`crate::Gemm`, `pub use harness::problem::Gemm`) is an edge to the module that
defines the item. Nested modules (`svg/chart.rs`) are named by their path (`svg::chart`), and
`super::` means the parent. A module also leads to the modules it declares (`mod chart;`), so a
child that imports its parent, or a module its parent leads to, imports back: every such edge,
and every edge of an import circle, is a *back-arrow*. In a crate with layers (LAYERS: the
top-level folders of `common`, in the order its `lib.rs` lists them), an import of a later
layer is one too. Prints each back-arrow and a count per crate.

    scripts/import-cycles.py [CRATE_DIR ...]
"""
import re, sys, pathlib

def modules(src):
    mods = {}
    for f in src.rglob("*.rs"):
        rel = f.relative_to(src).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] in ("lib", "main"):
            name = ""
        elif parts[-1] == "mod":
            name = "::".join(parts[:-1])
        else:
            name = "::".join(parts)
        mods[name] = f.read_text()
    return mods

def strip(text):
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r"#\[cfg\(test\)\]\s*mod tests \{.*", "", text, flags=re.S)

# A crate's layers, lowest first: a module of one may import its own and earlier layers only.
LAYERS = {"common": ["harness", "verify", "timing", "tools"]}

def reexports(root_text):
    out = {}
    for m in re.finditer(r"pub use ((?:\w+::)*\w+)::\{([^}]*)\};|pub use ((?:\w+::)*\w+)::(\w+);", root_text):
        mod, items = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        for it in items.split(","):
            it = it.strip().split(" as ")[-1].strip()
            if it:
                out[it] = mod
    return out

def edges(mods):
    names = set(mods)
    root = reexports(mods.get("", ""))
    graph = {m: set() for m in mods}
    for m, text in mods.items():
        text = strip(text)
        parent = m.rsplit("::", 1)[0] if "::" in m else ""
        refs = []
        for path in re.findall(r"\bcrate((?:::\w+)+)", text):
            refs.append(path.strip(":").split("::"))
        for path in re.findall(r"\bsuper((?:::\w+)+)", text):
            refs.append((parent.split("::") if parent else []) + path.strip(":").split("::"))
        # `use crate::{a::x, b::y}` groups.
        for group in re.findall(r"use crate::\{([^;]*)\};", text):
            for item in re.split(r",\s*(?![^{]*\})", group):
                refs.append(item.strip().split("::"))
        for parts in refs:
            parts = [p for p in parts if p]
            target = None
            for n in range(len(parts), 0, -1):
                cand = "::".join(parts[:n])
                if cand in names:
                    target = cand
                    break
            if target is None and parts and parts[0] in root:
                target = root[parts[0]]
            if target is not None and target != m and target != "":
                graph[m].add(target)
    return graph

def back_arrows(graph, layers):
    """(importer, imported, why) for every import that leads back up."""
    leads = {m: set(v) for m, v in graph.items()}
    for m in graph:
        if m:
            leads.setdefault(m.rsplit("::", 1)[0] if "::" in m else "", set()).add(m)

    def reaches(a, b):
        seen, todo = set(), [a]
        while todo:
            n = todo.pop()
            if n == b:
                return True
            if n not in seen:
                seen.add(n)
                todo.extend(leads.get(n, ()))
        return False

    def layer(m):
        top = m.split("::")[0]
        return layers.index(top) if top in layers else None

    found = []
    for a in sorted(graph):
        for b in sorted(graph[a]):
            if reaches(b, a):
                why = "its parent" if a.startswith(b + "::") else "leads back to it"
                found.append((a, b, why))
            elif None not in (layer(a), layer(b)) and layer(b) > layer(a):
                found.append((a, b, f"layer {layers[layer(b)]} is above {layers[layer(a)]}"))
    return found

crates = sys.argv[1:] or ["common", "xtask", "grader"]
bad = 0
for crate in crates:
    src = pathlib.Path(crate) / "src"
    graph = edges(modules(src))
    found = back_arrows(graph, LAYERS.get(pathlib.Path(crate).name, []))
    n_edges = sum(len(v) for v in graph.values())
    for a, b, why in found:
        print(f"{crate}: back-arrow: {a or 'lib'} -> {b} ({why})")
    print(f"{crate}: {len(graph)} modules, {n_edges} imports, {len(found)} back-arrows")
    bad += len(found)
sys.exit(1 if bad else 0)
