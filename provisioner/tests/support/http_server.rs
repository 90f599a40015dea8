//! The one accept-and-serve loop of the test servers that speak HTTP/1.1
//! through hyper: NetBox (`netbox_server.rs`), the switches' REST APIs over
//! TLS (`switch_servers.rs`) and the Nautobot recorder and replay
//! (`nautobot_replay.rs`). Each of them is its handler; this is the
//! listener, the TLS handshake when there is one, and a connection per
//! client.

use std::future::Future;
use std::net::SocketAddr;

use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response};

/// A test server's answer to one request; an `Err` closes the connection
/// without an answer (an answer lost).
pub type Answer = Result<Response<Full<Bytes>>, std::io::Error>;

/// Serves `handle` on a fresh loopback port, in the current tokio runtime,
/// over TLS when `tls` is given; returns the address. A client whose TLS
/// handshake fails is dropped.
pub async fn serve<H, F>(tls: Option<tokio_rustls::TlsAcceptor>, handle: H) -> SocketAddr
where
    H: Fn(Request<Incoming>) -> F + Clone + Send + Sync + 'static,
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
                let service = hyper::service::service_fn(handle);
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
