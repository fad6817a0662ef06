#!/usr/bin/env python3
"""Fails if the modules of a crate import each other in a circle.

For each module file of the crates given (default: common, xtask, grader), every `crate::m`
path (in `use` lines and in code) is an edge to module `m`; a path through the crate root's
re-exports (`crate::Gemm`, `pub use problem::Gemm`) is an edge to the module that defines the
item. Nested modules (`svg/chart.rs`) are named by their path (`svg::chart`), and `super::`
means the parent. Prints every cycle found.

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

def reexports(root_text):
    out = {}
    for m in re.finditer(r"pub use (\w+)::\{([^}]*)\};|pub use (\w+)::(\w+);", root_text):
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

def cycles(graph):
    found, state, stack = [], {}, []
    def visit(n):
        state[n] = 1
        stack.append(n)
        for t in sorted(graph.get(n, ())):
            if state.get(t) == 1:
                found.append(stack[stack.index(t):] + [t])
            elif t not in state:
                visit(t)
        stack.pop()
        state[n] = 2
    for n in sorted(graph):
        if n not in state:
            visit(n)
    return found

crates = sys.argv[1:] or ["common", "xtask", "grader"]
bad = 0
for crate in crates:
    src = pathlib.Path(crate) / "src"
    graph = edges(modules(src))
    found = cycles(graph)
    n_edges = sum(len(v) for v in graph.values())
    for c in found:
        print(f"{crate}: import cycle: {' -> '.join(x or 'lib' for x in c)}")
    print(f"{crate}: {len(graph)} modules, {n_edges} imports, {len(found)} cycles")
    bad += len(found)
sys.exit(1 if bad else 0)
