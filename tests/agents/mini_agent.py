#!/usr/bin/python3
"""mini_agent.py: a small terminal coding agent of our own, for the generic
profile's session test (tests/agents/generic.sh): what `--agent generic`
is for, any other CLI that reads OPENAI_BASE_URL and OPENAI_API_KEY. It
speaks the OpenAI Responses API (streamed) to that endpoint, which, as
OpenAI's SDKs take it, is the API's root (/v1 included): a prompt
line, the streamed answer with an "(esc to interrupt)" status line while
it streams, a shell command the model asks for run only once the user
answers y to "Run shell command? [y/N]", an API error shown, /exit.
Python's standard library only (the sandbox has /usr's python3)."""
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request


def post(base, key, items):
    body = json.dumps({"model": "mini", "input": items, "stream": True,
                       "tools": [{"type": "function",
                                  "name": "exec_command",
                                  "parameters": {"type": "object"}}]})
    req = urllib.request.Request(
        base.rstrip("/") + "/responses", data=body.encode(),
        headers={"Content-Type": "application/json",
                 "Authorization": "Bearer " + key})
    return urllib.request.urlopen(req, timeout=120)


def turn(base, key, items):
    """One model turn: the text streamed out, or a function call."""
    sys.stdout.write("  working (esc to interrupt)\r")
    sys.stdout.flush()
    call = None
    text = []
    with post(base, key, items) as r:
        for raw in r:
            line = raw.decode("utf-8", "replace").strip()
            if not line.startswith("data: "):
                continue
            ev = json.loads(line[6:])
            if ev.get("type") == "response.output_text.delta":
                if not text:
                    sys.stdout.write("\x1b[2K")
                text.append(ev.get("delta", ""))
                sys.stdout.write(ev.get("delta", ""))
                sys.stdout.flush()
            elif ev.get("type") == "response.output_item.done":
                item = ev.get("item") or {}
                if item.get("type") == "function_call":
                    call = item
    sys.stdout.write("\x1b[2K\r" if not text else "\n")
    return "".join(text), call


def main():
    base = os.environ.get("OPENAI_BASE_URL")
    key = os.environ.get("OPENAI_API_KEY", "")
    if not base:
        print("mini-agent: OPENAI_BASE_URL is not set")
        return 1
    print("mini-agent: a small agent; /exit ends it")
    items = []
    while True:
        try:
            line = input("mini> ")
        except EOFError:
            return 0
        if line.strip() == "/exit":
            print("bye")
            return 0
        items.append({"type": "message", "role": "user",
                      "content": [{"type": "input_text", "text": line}]})
        try:
            while True:
                text, call = turn(base, key, items)
                if call is None:
                    items.append({"type": "message", "role": "assistant",
                                  "content": [{"type": "output_text",
                                               "text": text}]})
                    break
                args = json.loads(call.get("arguments") or "{}")
                cmd = args.get("cmd", "")
                print("The model wants to run: " + cmd)
                answer = input("Run shell command? [y/N] ")
                # the question goes once answered, as a dialog does
                sys.stdout.write("\x1b[2A\x1b[2K\x1b[1B\x1b[2K\x1b[1A")
                out = "refused by the user"
                if answer.strip().lower() == "y":
                    print("ran: " + cmd)
                    sys.stdout.write("  working (esc to interrupt)\r")
                    sys.stdout.flush()
                    p = subprocess.run(["/bin/sh", "-c", cmd],
                                       capture_output=True, text=True)
                    out = p.stdout + p.stderr
                    # a tool's run takes a moment, as an agent's does
                    time.sleep(1)
                items.append(dict(call))
                items.append({"type": "function_call_output",
                              "call_id": call.get("call_id"),
                              "output": out})
        except urllib.error.HTTPError as e:
            print("error: the model API answered %d" % e.code)
        except (urllib.error.URLError, OSError) as e:
            print("error: %s" % e)


if __name__ == "__main__":
    sys.exit(main())
