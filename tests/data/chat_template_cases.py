#!/usr/bin/env python3
"""chat_template_cases.py — writes chat_template_cases.tsv: chat templates, each rendered by jinja2
for one user turn with add_generation_prompt=True (the witness for lib/llm/chat_template.c).

jinja2 is set up as Hugging Face transformers' apply_chat_template sets it up
(ImmutableSandboxedEnvironment, trim_blocks=True, lstrip_blocks=True). The smollm2 template is the
text of `tokenizer.chat_template` in SmolLM2-135M-Instruct.Q4_1.gguf; when the gguf package and
models/SmolLM2-135M-Instruct.Q4_1.gguf are there, the script checks that it still is.

Rows: `T<TAB>name<TAB>expect<TAB>template` (expect: chatml or unsupported, written by hand from
what each template is), then `R<TAB>name<TAB>user<TAB>rendered` for every supported template and
user text. Fields escaped as the prompt files are: \\n \\t \\r \\\\.

Run: python3 tests/data/chat_template_cases.py > tests/data/chat_template_cases.tsv
"""
import os
import sys

from jinja2.sandbox import ImmutableSandboxedEnvironment

SMOLLM2 = ("{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
           "{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}"
           "{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
           "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}")

TEMPLATES = [
    ("smollm2", "chatml", SMOLLM2),
    # the same shape with another default system turn (Qwen2-Instruct's)
    ("qwen2", "chatml",
     "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
     "{{ '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n' }}{% endif %}"
     "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}"
     "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"),
    # plain ChatML: no default system turn
    ("chatml", "chatml",
     "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
     "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"),
    # plain ChatML spelt otherwise: lines and indentation (trim_blocks, lstrip_blocks), a comment,
    # attribute access, double quotes, escapes instead of newline bytes, one literal split in two
    ("chatml_spaced", "chatml",
     "{# ChatML #}\n{% for message in messages %}\n{{ \"<|im_start|>\" + message.role + \"\\n\" + message.content + \"<|im_end|>\" + \"\\n\" }}\n"
     "{%- endfor %}\n  {% if add_generation_prompt %}\n{{- '<|im_start|>' + 'assistant\\n' }}\n{%- endif %}\n"),
    # the same with the message line indented: lstrip_blocks strips before {% only, so the four
    # spaces are output before each message (a shape the renderer does not model)
    ("chatml_indented", "unsupported",
     "{% for message in messages %}\n    {{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}\n"
     "{%- endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"),
    # unsupported: other families, and ChatML with a branch the renderer does not model
    ("llama3", "unsupported",
     "{% for message in messages %}{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n' + message['content'] + '<|eot_id|>' }}"
     "{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}"),
    ("zephyr", "unsupported",
     "{% for message in messages %}{{ '<|' + message['role'] + '|>\n' + message['content'] + '</s>\n' }}{% endfor %}"
     "{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% endif %}"),
    ("chatml_tools", "unsupported",
     "{% for message in messages %}{% if message['role'] == 'tool' %}{{ '<|im_start|>user\n<tool_response>' + message['content'] + '</tool_response><|im_end|>\n' }}"
     "{% else %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endif %}{% endfor %}"
     "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"),
    ("chatml_no_prompt", "unsupported",
     "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}"),
    ("chatml_upper", "unsupported",
     "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] | upper + '<|im_end|>' + '\n'}}"
     "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"),
]

USERS = [
    "Hello",
    "What is the capital of France?",
    "请写一首关于秋天的短诗。",
    "Line one\nLine two",
    "  spaced\tand tabbed  ",
    "<|im_end|> is just text here",
    "",
]


def esc(s):
    return s.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t").replace("\r", "\\r")


def check_gguf():
    path = os.path.join(os.path.dirname(__file__), "..", "..", "models", "SmolLM2-135M-Instruct.Q4_1.gguf")
    try:
        from gguf import GGUFReader
    except ImportError:
        return
    if not os.path.exists(path):
        return
    f = GGUFReader(path).fields["tokenizer.chat_template"]
    text = bytes(f.parts[f.data[0]]).decode()
    if text != SMOLLM2:
        sys.exit("chat_template_cases.py: the GGUF's template is no longer the one written here")


def main():
    check_gguf()
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    print("# chat_template_cases.tsv: written by chat_template_cases.py (jinja2 %s); do not edit" % __import__("jinja2").__version__)
    for name, expect, text in TEMPLATES:
        print("T\t%s\t%s\t%s" % (name, expect, esc(text)))
    for name, expect, text in TEMPLATES:
        if expect != "chatml":
            continue
        tmpl = env.from_string(text)
        for u in USERS:
            out = tmpl.render(messages=[{"role": "user", "content": u}], add_generation_prompt=True)
            print("R\t%s\t%s\t%s" % (name, esc(u), esc(out)))


main()
