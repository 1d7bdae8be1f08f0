#!/usr/bin/env bash
# What an OTLP trace exporter adds to a binary built with retry's release
# profile: the official SDK, a small blocking HTTP client (ureq, without and
# with rustls) and OTLP/JSON posted by hand over std's TcpStream, each
# against an empty baseline built in the same run (issue 34 item 3).
# Scratch crates in a temporary directory, removed at the end; nothing in
# the repository changes. Needs the network once (crates.io); takes some
# minutes on 2 cores (the SDK pulls in tokio, hyper and reqwest).
#   bash bench/otlp-size.sh [--keep]
set -euo pipefail
dir=$(mktemp -d)
[ "${1:-}" = --keep ] && echo "scratch crates kept in $dir" >&2 || trap 'rm -rf "$dir"' EXIT
cd "$dir"

# The profile is copied from retry's Cargo.toml so the numbers are retry's.
profile=$(sed -n '/^\[profile.release\]/,/^$/p' "$OLDPWD/Cargo.toml")
members=(baseline sdk via-ureq via-ureq-rustls std-tcp)
{
  printf '[workspace]\nresolver = "2"\nmembers = [%s]\n\n' "$(printf '"%s",' "${members[@]}")"
  printf '%s\n' "$profile"
} >Cargo.toml

# Every variant builds the same JSON body; the baseline only prints it, so a
# delta is the transport (and, for the SDK, its span model) alone.
body='fn body() -> String { format!("{{\"resourceSpans\":[{{\"scopeSpans\":[{{\"spans\":[{{\"name\":\"{}\"}}]}}]}}]}}", std::env::args().nth(1).unwrap_or_default()) }'

crate() { # name, [dependencies] lines, main body
  mkdir -p "$1/src"
  printf '[package]\nname = "%s"\nversion = "0.0.0"\nedition = "2024"\n\n[dependencies]\n%s\n' "$1" "$2" >"$1/Cargo.toml"
  printf '%s\n%s\n' "$body" "$3" >"$1/src/main.rs"
}

crate baseline '' 'fn main() { println!("{}", body()); }'

crate sdk 'opentelemetry = { version = "0.33", default-features = false, features = ["trace"] }
opentelemetry_sdk = { version = "0.33", default-features = false, features = ["trace"] }
opentelemetry-otlp = { version = "0.33", default-features = false, features = ["trace", "http-proto", "reqwest-blocking-client"] }' '
use opentelemetry::trace::{Tracer, TracerProvider as _};
use opentelemetry_otlp::SpanExporter;
use opentelemetry_sdk::trace::SdkTracerProvider;
fn main() {
    let _ = body();
    let exporter = SpanExporter::builder().with_http().build().unwrap();
    let provider = SdkTracerProvider::builder().with_simple_exporter(exporter).build();
    provider.tracer("retry").in_span("run", |_| {});
    let _ = provider.shutdown();
}'

ureq_main='fn main() {
    let url = std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT").unwrap_or_default();
    let r = ureq::post(&url).header("content-type", "application/json").send(body());
    println!("{:?}", r.map(|r| r.status()));
}'
crate via-ureq 'ureq = { version = "3", default-features = false }' "$ureq_main"
crate via-ureq-rustls 'ureq = { version = "3", default-features = false, features = ["rustls"] }' "$ureq_main"

crate std-tcp '' '
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;
fn main() {
    let url = std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT").unwrap_or_default();
    let rest = url.strip_prefix("http://").unwrap_or(&url);
    let (host, path) = rest.split_once("/").unwrap_or((rest, ""));
    let body = body();
    let t = Duration::from_secs(2);
    let r = (|| -> std::io::Result<String> {
        let addr = host.to_socket_addrs()?.next().ok_or(std::io::ErrorKind::NotFound)?;
        let mut s = TcpStream::connect_timeout(&addr, t)?;
        s.set_read_timeout(Some(t))?;
        s.set_write_timeout(Some(t))?;
        write!(s, "POST /{path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len())?;
        let mut head = [0; 64];
        let n = s.read(&mut head)?;
        Ok(String::from_utf8_lossy(&head[..n]).into_owned())
    })();
    println!("{:?}", r.map(|h| h.split(" ").nth(1).map(str::to_owned)));
}'

for m in "${members[@]}"; do
  cargo build --quiet --release -p "$m" >&2
done
base=$(stat -c %s target/release/baseline)
printf '| build | stripped size | added to the baseline | ratio |\n|---|---|---|---|\n'
for m in "${members[@]}"; do
  s=$(stat -c %s "target/release/$m")
  awk -v m="$m" -v s="$s" -v b="$base" 'BEGIN { printf "| %s | %.0f KB | %+.0f KB | %.2f |\n", m, s/1000, (s-b)/1000, s/b }'
done
