#!/usr/bin/env python3
"""Fails if a host source file is over 600 lines or a function over 150 (the house's limits).

Looks at every `.rs` file of common, grader, xtask, steps and the step crates. A function's
lines run from its `fn` line to the line of the brace that closes its body, found by matching
braces outside comments, strings and character literals.

    scripts/sizes.py [DIR ...]
"""
import pathlib, re, sys

MAX_FILE, MAX_FN = 600, 150

def code_only(text):
    """`text` with comments, strings and char literals blanked (newlines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i)); i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j): depth += 1; j += 2
                elif text.startswith("*/", j): depth -= 1; j += 2
                else: j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j])); i = j
        elif (m := re.compile(r'b?r(#*)"').match(text, i)) and (i == 0 or not (text[i-1].isalnum() or text[i-1] == "_")):
            end = text.find('"' + m.group(1), m.end())
            j = n if end < 0 else end + 1 + len(m.group(1))
            out.append(re.sub(r"[^\n]", " ", text[i:j])); i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(re.sub(r"[^\n]", " ", text[i:j + 1])); i = j + 1
        elif c == "'" and (m := re.compile(r"'(\\.[^']*|[^\\'])'").match(text, i)):
            out.append(" " * (m.end() - i)); i = m.end()
        else:
            out.append(c); i += 1
    return "".join(out)

def functions(text):
    """(name, first line, line count) of every function with a body."""
    code = code_only(text)
    for m in re.finditer(r"\bfn\s+(\w+)", code):
        # The body opens at the first `{` after the signature; a `;` first means no body.
        j = m.end()
        depth_paren = 0
        while j < len(code):
            ch = code[j]
            if ch in "([<": depth_paren += 1
            elif ch in ")]>": depth_paren -= 1
            elif ch == ";" and depth_paren <= 0: break
            elif ch == "{" and depth_paren <= 0: break
            j += 1
        if j >= len(code) or code[j] != "{":
            continue
        depth, k = 0, j
        while k < len(code):
            if code[k] == "{": depth += 1
            elif code[k] == "}":
                depth -= 1
                if depth == 0: break
            k += 1
        first = code.count("\n", 0, m.start()) + 1
        last = code.count("\n", 0, k) + 1
        yield m.group(1), first, last - first + 1

dirs = sys.argv[1:] or ["common", "grader", "xtask", "steps"] + sorted(str(p) for p in pathlib.Path(".").glob("step[0-9]*"))
bad = 0
for d in dirs:
    for f in sorted(pathlib.Path(d).rglob("*.rs")):
        if "target" in f.parts:
            continue
        text = f.read_text()
        lines = text.count("\n")
        if lines > MAX_FILE:
            print(f"{f}: {lines} lines (at most {MAX_FILE})"); bad += 1
        for name, first, count in functions(text):
            if count > MAX_FN:
                print(f"{f}:{first}: fn {name} is {count} lines (at most {MAX_FN})"); bad += 1
print(f"sizes: {bad} over the limits ({MAX_FILE} lines a file, {MAX_FN} a function)")
sys.exit(1 if bad else 0)
