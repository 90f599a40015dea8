//! The one accept-and-serve loop of the test servers that speak HTTP/1.1
//! through hyper: NetBox (`netbox_server.rs`), the switches' REST APIs over
//! TLS (`switch_servers.rs`) and the Nautobot recorder and replay
//! (`nautobot_replay.rs`). Each of them is its handler; this is the
//! listener, the TLS handshake when there is one, a connection per client,
//! and each request read whole ([`Received`]).

use std::future::Future;
use std::net::SocketAddr;

use http_body_util::{BodyExt as _, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{HeaderMap, Request, Response};
use serde_json::Value;

/// One request as a test server's handler gets it, its body read whole.
#[derive(Debug, Clone)]
pub struct Received {
    /// `GET`, `PATCH`, ...
    pub method: String,
    /// The path with its query.
    pub uri: String,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Received {
    async fn read(req: Request<Incoming>) -> Result<Received, std::io::Error> {
        let method = req.method().to_string();
        let uri = (req.uri().path_and_query()).map_or_else(String::new, |p| p.to_string());
        let (parts, body) = req.into_parts();
        let body = body
            .collect()
            .await
            .map_err(std::io::Error::other)?
            .to_bytes();
        Ok(Received {
            method,
            uri,
            headers: parts.headers,
            body,
        })
    }

    /// A header's value, when it is text.
    pub fn header(&self, name: hyper::header::HeaderName) -> Option<String> {
        (self.headers.get(name))
            .and_then(|h| h.to_str().ok())
            .map(str::to_string)
    }

    /// The body as JSON; `null` when it is empty.
    pub fn json(&self) -> serde_json::Result<Value> {
        if self.body.is_empty() {
            Ok(Value::Null)
        } else {
            serde_json::from_slice(&self.body)
        }
    }
}

/// A test server's answer to one request; an `Err` closes the connection
/// without an answer (an answer lost).
pub type Answer = Result<Response<Full<Bytes>>, std::io::Error>;

/// Serves `handle` on a fresh loopback port, in the current tokio runtime,
/// over TLS when `tls` is given; returns the address. A client whose TLS
/// handshake fails is dropped.
pub async fn serve<H, F>(tls: Option<tokio_rustls::TlsAcceptor>, handle: H) -> SocketAddr
where
    H: Fn(Received) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Answer> + Send + 'static,
{
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (tls, handle) = (tls.clone(), handle.clone());
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                    let handle = handle.clone();
                    async move { handle(Received::read(req).await?).await }
                });
                let http = hyper::server::conn::http1::Builder::new();
                let _ = match tls {
                    None => {
                        http.serve_connection(hyper_util::rt::TokioIo::new(tcp), service)
                            .await
                    }
                    Some(acceptor) => match acceptor.accept(tcp).await {
                        Ok(stream) => {
                            http.serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                                .await
                        }
                        Err(_) => return,
                    },
                };
            });
        }
    });
    addr
}
