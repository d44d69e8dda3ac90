#!/usr/bin/env python3
"""mock_model.py: a model API of our own on loopback, for driving the real
agent CLIs through corral (issue 18). It speaks two dialects, streaming:

  POST /v1/messages    Anthropic Messages API (server-sent events), for
                       Claude Code
  POST /v1/responses   OpenAI Responses API (server-sent events), for Codex

The turns are scripted by the last user message:

  contains CORRAL-EDIT   a tool call that needs permission: write the file
                         corral-edit.txt (Claude Code: the Write tool;
                         Codex: exec_command asking to run unsandboxed)
  contains CORRAL-BASH   (Claude Code) the Bash tool running a command
                         that writes corral-bash.txt, which needs permission
  contains CORRAL-ERROR  an API error (HTTP 400, which no client retries)
  contains CORRAL-SLOW   a plain answer after 3 s of thinking (no byte of
                         the reply: the CLI shows its status line), then
                         streamed over about 6 s
  contains CORRAL-BADUSAGE  a plain answer whose usage block is malformed
  a tool result          the plain answer "Edit done."
  anything else          the plain answer "Hello from the mock model."

Every request is logged, one JSON line each, to --log (method, path,
the scripted reply, the time, the credential headers it came with), and
the end of each model reply as {"done": N}: the tests read it from the
host side (sample.py: while a reply streams, the agent works). The server
binds 127.0.0.1 only and prints its port on stdout once it listens; with
--tls CERT KEY it speaks HTTPS (the model gateway's upstream, a
certificate made at test time).
"""
import argparse
import http.server
import json
import os
import socketserver
import ssl
import sys
import threading
import time

EDIT_FILE = "corral-edit.txt"
EDIT_TEXT = "edited by the agent through corral\n"
PLAIN = "Hello from the mock model."
SLOW = "A slow answer from the mock model, one word at a time, ending here."
DONE = "Edit done."
# Claude Code's Bash tool: a command it asks for, which "don't ask again"
# remembers in /work/.claude/settings.local.json
BASH_FILE = "corral-bash.txt"
BASH_COMMAND = "python3 -c \"open('%s', 'w').write('ran')\"" % BASH_FILE
THINK_S = 3
BADUSAGE = "An answer with a malformed usage block."

LOG_LOCK = threading.Lock()
LOG = None
DUMP = None
COUNTER = [0]


def creds(h):
    """The credential headers a request came with (the gateway's key), and
    the port it came from (one per connection: keep-alive is seen)."""
    return {"x_api_key": h.headers.get("x-api-key"),
            "authorization": h.headers.get("authorization"),
            "peer": h.client_address[1]}


def log(entry):
    with LOG_LOCK:
        COUNTER[0] += 1
        entry["n"] = COUNTER[0]
        entry["t"] = round(time.time(), 3)
        if LOG is not None:
            LOG.write(json.dumps(entry) + "\n")
            LOG.flush()
        return entry["n"]


def text_of(content):
    """The text of one message's content (a string or a list of blocks)."""
    if isinstance(content, str):
        return content
    out = []
    if isinstance(content, list):
        for b in content:
            if isinstance(b, dict):
                if b.get("type") in ("text", "input_text", "output_text"):
                    out.append(str(b.get("text", "")))
    return "\n".join(out)


# ---- Anthropic Messages -----------------------------------------------------

def anthropic_script(req):
    """('text', s) | ('tool', name, input) | ('error', status, type)."""
    msgs = req.get("messages") or []
    tools = [t.get("name") for t in (req.get("tools") or [])
             if isinstance(t, dict)]
    # The user's turn: every message since the last assistant one.
    turn = []
    for m in reversed(msgs):
        if not isinstance(m, dict) or m.get("role") == "assistant":
            break
        turn.insert(0, m.get("content"))
    for content in turn:
        if isinstance(content, list) and any(
                isinstance(b, dict) and b.get("type") == "tool_result"
                for b in content):
            return ("text", DONE)
    text = "\n".join(text_of(c) for c in turn)
    if "CORRAL-BASH" in text and tools:
        return ("tool", "Bash", {"command": BASH_COMMAND,
                                 "description": "Write " + BASH_FILE})
    return scripted(text, tools, ("tool", "Write", {
        "file_path": "/work/" + EDIT_FILE, "content": EDIT_TEXT}))


def scripted(text, tools, edit):
    """The turn for the user's text: edit is the dialect's tool call."""
    # Side requests (titles, topics, quota) carry no tools: answer short.
    if not tools:
        return ("text", "Mock")
    if "CORRAL-ERROR" in text:
        return ("error", 400, "invalid_request_error")
    if "CORRAL-SLOW" in text:
        return ("text", SLOW)
    if "CORRAL-BADUSAGE" in text:
        return ("badusage", BADUSAGE)
    if "CORRAL-EDIT" in text:
        return edit
    return ("text", PLAIN)


def sse(wfile, event, data):
    wfile.write(("event: %s\ndata: %s\n\n" % (event, json.dumps(data)))
                .encode())
    wfile.flush()


def sse_start(h):
    h.send_response(200)
    h.send_header("Content-Type", "text/event-stream")
    h.send_header("Cache-Control", "no-cache")
    h.send_header("Connection", "close")
    h.end_headers()
    return h.wfile


def anthropic_stream(h, req, script):
    model = req.get("model", "mock")
    w = sse_start(h)
    bad = script[0] == "badusage"
    sse(w, "message_start", {"type": "message_start", "message": {
        "id": "msg_mock_%d" % COUNTER[0], "type": "message",
        "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": "ten"} if bad else
                 {"input_tokens": 10, "output_tokens": 1}}})
    if bad:
        script = ("text", script[1])
    if script[0] == "text":
        sse(w, "content_block_start", {"type": "content_block_start",
            "index": 0, "content_block": {"type": "text", "text": ""}})
        words = script[1].split(" ")
        if script[1] == SLOW:
            time.sleep(THINK_S)
        for i, word in enumerate(words):
            sse(w, "content_block_delta", {"type": "content_block_delta",
                "index": 0, "delta": {"type": "text_delta",
                "text": word + (" " if i + 1 < len(words) else "")}})
            time.sleep(0.5 if script[1] == SLOW else 0.02)
        sse(w, "content_block_stop", {"type": "content_block_stop",
                                      "index": 0})
        stop = "end_turn"
    else:
        _, name, inp = script
        sse(w, "content_block_start", {"type": "content_block_start",
            "index": 0, "content_block": {"type": "tool_use",
            "id": "toolu_mock_%d" % COUNTER[0], "name": name,
            "input": {}}})
        js = json.dumps(inp)
        half = len(js) // 2
        for part in (js[:half], js[half:]):
            sse(w, "content_block_delta", {"type": "content_block_delta",
                "index": 0, "delta": {"type": "input_json_delta",
                "partial_json": part}})
        sse(w, "content_block_stop", {"type": "content_block_stop",
                                      "index": 0})
        stop = "tool_use"
    sse(w, "message_delta", {"type": "message_delta", "delta": {
        "stop_reason": stop, "stop_sequence": None},
        "usage": {"output_tokens": "five"} if bad else
                 {"output_tokens": 5}})
    sse(w, "message_stop", {"type": "message_stop"})


def anthropic_plain(h, req, script):
    """The same answer, not streamed."""
    if script[0] == "badusage":
        script = ("text", script[1])
    if script[0] == "text":
        content = [{"type": "text", "text": script[1]}]
        stop = "end_turn"
    else:
        content = [{"type": "tool_use", "id": "toolu_mock_%d" % COUNTER[0],
                    "name": script[1], "input": script[2]}]
        stop = "tool_use"
    body = json.dumps({"id": "msg_mock_%d" % COUNTER[0], "type": "message",
                       "role": "assistant", "model": req.get("model", "m"),
                       "content": content, "stop_reason": stop,
                       "stop_sequence": None,
                       "usage": {"input_tokens": 10, "output_tokens": 5}})
    h.send_json(200, body)


# ---- OpenAI Responses -------------------------------------------------------

def openai_script(req):
    items = req.get("input") or []
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    # The turn: the items after the user's last message.
    text = ""
    for it in reversed(items):
        if not isinstance(it, dict):
            continue
        if it.get("type") in ("function_call_output",
                              "custom_tool_call_output"):
            return ("text", DONE)
        if it.get("role") == "user":
            text = text_of(it.get("content"))
            break
    tools = []
    for t in req.get("tools") or []:
        if isinstance(t, dict):
            tools.append(t.get("name") or t.get("type"))
    # A command that asks to run outside Codex's own sandbox: approval.
    cmd = "printf '%s\\n' '" + EDIT_TEXT.strip() + "' > " + EDIT_FILE
    return scripted(text, tools, ("tool", "exec_command", {
        "cmd": cmd, "sandbox_permissions": "require_escalated",
        "justification": "Write " + EDIT_FILE + "?"}))


def openai_stream(h, req, script):
    w = sse_start(h)
    bad = script[0] == "badusage"
    if bad:
        script = ("text", script[1])
    rid = "resp_mock_%d" % COUNTER[0]
    seq = [0]

    def ev(kind, data):
        data["type"] = kind
        data["sequence_number"] = seq[0]
        seq[0] += 1
        sse(w, kind, data)

    base = {"id": rid, "object": "response", "created_at": int(time.time()),
            "status": "in_progress", "model": req.get("model", "mock"),
            "output": []}
    ev("response.created", {"response": dict(base)})
    if script[0] == "text":
        item = {"id": "msg_mock_%d" % COUNTER[0], "type": "message",
                "role": "assistant", "status": "in_progress", "content": []}
        ev("response.output_item.added", {"output_index": 0, "item": item})
        if script[1] == SLOW:
            time.sleep(THINK_S)
        for word in script[1].split(" "):
            ev("response.output_text.delta", {"item_id": item["id"],
               "output_index": 0, "content_index": 0, "delta": word + " "})
            time.sleep(0.5 if script[1] == SLOW else 0.02)
        done = dict(item, status="completed", content=[{
            "type": "output_text", "text": script[1], "annotations": []}])
        ev("response.output_item.done", {"output_index": 0, "item": done})
    else:
        _, name, args = script
        done = {"id": "fc_mock_%d" % COUNTER[0], "type": "function_call",
                "status": "completed", "call_id": "call_mock_%d" % COUNTER[0],
                "name": name, "arguments": json.dumps(args)}
        ev("response.output_item.added", {"output_index": 0,
           "item": dict(done, status="in_progress", arguments="")})
        ev("response.output_item.done", {"output_index": 0, "item": done})
    ev("response.completed", {"response": dict(base, status="completed",
       output=[done], usage={"tokens": "many"} if bad else {
       "input_tokens": 10, "output_tokens": 5,
       "total_tokens": 15, "input_tokens_details": {"cached_tokens": 0},
       "output_tokens_details": {"reasoning_tokens": 0}})})


# ---- the server -------------------------------------------------------------

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def send_json(self, status, body):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        # MOCK_KEEP_ALIVE=1: a whole answer leaves the connection open
        # for the next request (tests/agents/gateway_mint.sh)
        if os.environ.get("MOCK_KEEP_ALIVE") != "1":
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n > 64 << 20:
            return None
        return self.rfile.read(n) if n > 0 else b""

    def do_GET(self):
        path = self.path.split("?")[0]
        if path.endswith("/v1/models"):
            log(dict(creds(self), method="GET", path=path, reply="models"))
            self.send_json(200, json.dumps({"data": [{"id": "mock",
                "type": "model"}], "has_more": False}))
            return
        log(dict(creds(self), method="GET", path=self.path, reply=404))
        self.send_json(404, json.dumps({"error": {"type": "not_found_error",
                                                  "message": "mock"}}))

    def do_HEAD(self):
        log({"method": "HEAD", "path": self.path, "reply": 200})
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        raw = self.read_body()
        try:
            req = json.loads(raw or b"{}")
        except ValueError:
            req = {}
        path = self.path.split("?")[0]
        if path.endswith("/v1/messages/count_tokens"):
            log(dict(creds(self), method="POST", path=path,
                     reply="count"))
            self.send_json(200, json.dumps({"input_tokens": 10}))
            return
        if DUMP is not None:
            with LOG_LOCK:
                DUMP.write(json.dumps(req)[:200000] + "\n")
                DUMP.flush()
        if path.endswith("/v1/messages"):
            script = anthropic_script(req)
            n = log(dict(creds(self), method="POST", path=path,
                         api="anthropic", stream=bool(req.get("stream")),
                         reply=script[0],
                         detail=script[1] if script[0] != "error" else
                         script[2],
                         tools=[t.get("name") for t in
                                (req.get("tools") or [])
                                if isinstance(t, dict)][:40]))
            if script[0] == "error":
                self.send_json(script[1], json.dumps({"type": "error",
                    "error": {"type": script[2],
                              "message": "Mock error (scripted)"}}))
            elif req.get("stream"):
                anthropic_stream(self, req, script)
            else:
                anthropic_plain(self, req, script)
            log({"done": n})
            return
        if path.endswith("/responses"):
            script = openai_script(req)
            n = log(dict(creds(self), method="POST", path=path,
                         api="openai", reply=script[0],
                         detail=script[1] if script[0] != "error" else
                         script[2]))
            if script[0] == "error":
                self.send_json(script[1], json.dumps({"error": {
                    "type": script[2], "code": script[2],
                    "message": "Mock error (scripted)"}}))
            else:
                openai_stream(self, req, script)
            log({"done": n})
            return
        log(dict(creds(self), method="POST", path=path, reply=404))
        self.send_json(404, json.dumps({"error": {"type": "not_found_error",
                                                  "message": "mock"}}))


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    global LOG, DUMP
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--log", default=None)
    ap.add_argument("--dump", default=None,
                    help="every request body, one JSON line each")
    ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"), default=None,
                    help="speak HTTPS with this certificate and key")
    a = ap.parse_args()
    if a.log:
        LOG = open(a.log, "a")
    if a.dump:
        DUMP = open(a.dump, "a")
    srv = Server(("127.0.0.1", a.port), Handler)
    if a.tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.tls[0], a.tls[1])
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    print(srv.server_address[1], flush=True)
    sys.stdout.close()
    srv.serve_forever()


if __name__ == "__main__":
    main()
