#!/usr/bin/env python3
"""A loopback OTLP/HTTP trace receiver for tests/integration/trace.rs.

Decodes what retry sends with the OpenTelemetry project's own definitions
(the `opentelemetry-proto` package): `ParseFromString` for http/protobuf,
`json_format.ParseDict` for http/json (after OTLP's one departure from
protobuf's JSON mapping: ids in hex, not base64). Prints the port it
listens on (127.0.0.1, chosen by the kernel), then, once the first request
is answered, one flat JSON object per span and one for the request, and
exits; with no request within the bound (argv[1] seconds, default 30) it
exits 1 on its own.

    python3 tests/otlp/receiver.py [SECONDS]
"""
import base64
import binascii
import http.server
import json
import sys
import threading

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

IDS = ("traceId", "spanId", "parentSpanId")


def from_json(body):
    """OTLP/JSON -> the request message, ids turned to protobuf's base64."""
    tree = json.loads(body)
    for resource_spans in tree.get("resourceSpans", []):
        for scope_spans in resource_spans.get("scopeSpans", []):
            for span in scope_spans.get("spans", []):
                for key in IDS:
                    if key in span:
                        raw = binascii.unhexlify(span[key])
                        span[key] = base64.b64encode(raw).decode()
    request = trace_service_pb2.ExportTraceServiceRequest()
    json_format.ParseDict(tree, request)
    return request


def value(any_value):
    """An attribute's value as a string; an array's values joined by `|`."""
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return "|".join(value(v) for v in any_value.array_value.values)
    return str(getattr(any_value, kind)).lower() if kind == "bool_value" else str(getattr(any_value, kind))


def flat(request, headers, path):
    lines = []
    for resource_spans in request.resource_spans:
        resource = {a.key: value(a.value) for a in resource_spans.resource.attributes}
        lines.append({"request": "1", "path": path, "content_type": headers.get("Content-Type", ""),
                      "api_key": headers.get("api-key", ""),
                      **{"resource." + k: v for k, v in resource.items()}})
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                line = {
                    "scope": scope_spans.scope.name,
                    "trace_id": span.trace_id.hex(),
                    "span_id": span.span_id.hex(),
                    "parent": span.parent_span_id.hex(),
                    "name": span.name,
                    "kind": str(span.kind),
                    "status": str(span.status.code),
                    "ordered": str(span.start_time_unix_nano <= span.end_time_unix_nano).lower(),
                }
                for attribute in span.attributes:
                    line["attr." + attribute.key] = value(attribute.value)
                lines.append(line)
    return lines


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        kind = self.headers.get("Content-Type", "")
        if kind == "application/json":
            request = from_json(body)
        else:
            request = trace_service_pb2.ExportTraceServiceRequest()
            request.ParseFromString(body)
        self.server.received = flat(request, self.headers, self.path)
        answer = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)
        threading.Thread(target=self.server.shutdown).start()

    def log_message(self, *args):
        pass


def main():
    bound = float(sys.argv[1]) if len(sys.argv) > 1 else 30.0
    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    server.received = None
    print(server.server_address[1], flush=True)
    # Never outlives its bound, whatever the test does.
    timer = threading.Timer(bound, server.shutdown)
    timer.daemon = True
    timer.start()
    server.serve_forever()
    if server.received is None:
        sys.exit(1)
    for line in server.received:
        print(json.dumps(line, sort_keys=True))


if __name__ == "__main__":
    main()
