#!/usr/bin/env python3
"""chat_template_ids.py — writes chat_template_ids.tsv: token ids of user turns wrapped in
SmolLM2-135M-Instruct's chat template, the rendering by jinja2 (as chat_template_cases.py sets it
up) and the ids by llama.cpp's llama-tokenize (special tokens parsed, its default; the GGUF says
add_bos_token=false). The user texts: the smollm2 rows of chat_template_cases.tsv and every 24th
prompt of prompts/lab-prompts.txt (a spread over its kinds).

Rows: `user<TAB>ids` (user escaped as the prompt files are; ids space-separated).

Run: python3 tests/data/chat_template_ids.py LLAMA_TOKENIZE GGUF > tests/data/chat_template_ids.tsv
"""
import os
import subprocess
import sys
import tempfile

from jinja2.sandbox import ImmutableSandboxedEnvironment

HERE = os.path.dirname(os.path.abspath(__file__))


def unesc(s):
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            n = s[i + 1]
            if n == "x":
                out.append(chr(int(s[i + 2:i + 4], 16)))  # ASCII bytes only in these files
                i += 4
                continue
            out.append({"n": "\n", "t": "\t", "r": "\r", "\\": "\\"}[n])
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def esc(s):
    return s.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")


def main():
    tok, gguf = sys.argv[1], sys.argv[2]
    template, users = None, []
    for line in open(os.path.join(HERE, "chat_template_cases.tsv"), encoding="utf-8"):
        f = line.rstrip("\n").split("\t")
        if f[0] == "T" and f[1] == "smollm2":
            template = unesc(f[3])
        if f[0] == "R" and f[1] == "smollm2":
            users.append(unesc(f[2]))
    lab = [l.rstrip("\n") for l in open(os.path.join(HERE, "..", "..", "prompts", "lab-prompts.txt"), encoding="utf-8")]
    lab = [unesc(l.split("\t", 1)[1]) for l in lab if l and not l.startswith("#")]
    users += lab[::24]
    tmpl = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True).from_string(template)
    print("# chat_template_ids.tsv: written by chat_template_ids.py (jinja2 rendering, llama.cpp llama-tokenize ids); do not edit")
    for u in users:
        text = tmpl.render(messages=[{"role": "user", "content": u}], add_generation_prompt=True)
        with tempfile.NamedTemporaryFile("wb", delete=False) as fp:
            fp.write(text.encode("utf-8"))
        out = subprocess.run([tok, "-m", gguf, "-f", fp.name, "--ids", "--log-disable"], capture_output=True, text=True, check=True)
        os.unlink(fp.name)
        ids = out.stdout.strip().strip("[]").replace(",", " ").split()
        print("%s\t%s" % (esc(u), " ".join(ids)))


main()
