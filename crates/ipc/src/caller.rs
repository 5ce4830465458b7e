//! The caller a call is made for, when a server inside the RPC server's own process calls
//! on someone else's behalf (the NameNode's WebHDFS for an HTTP client), as Hadoop's
//! `Server.getRemoteIp()` and audit `proto=` report that client rather than the gateway.
//!
//! - Carried in the request header's caller context (`RpcCallerContextProto.context`),
//!   Hadoop's field for "who this call is for", as `clientIp:<ip>,clientProto:<proto>`
//!   (Hadoop's router writes `clientIp:` the same way): no new wire field.
//! - Set for the calls a future makes with [`scope`], a task-local as Hadoop's
//!   `CallerContext.setCurrent` is a thread-local: the rhdfs-client calls under it need no
//!   extra argument.
//! - Believed only on an in-process connection (`local`), which no network peer can open:
//!   the server reads the context into [`CallContext::forwarded`](crate::CallContext) only
//!   there, so a network client sending the same string is still itself, over `rpc`.

use std::future::Future;
use std::net::IpAddr;

/// Who an in-process call is made for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forwarded {
    /// The address of the gateway's own client (an HTTP client's for WebHDFS).
    pub ip: IpAddr,
    /// What that client spoke (`webhdfs`): the audit log's `proto=`.
    pub proto: String,
}

const IP_KEY: &str = "clientIp";
const PROTO_KEY: &str = "clientProto";
/// A protocol name is a short lowercase token (it lands in audit lines unescaped).
const MAX_PROTO_LEN: usize = 16;

impl Forwarded {
    pub fn new(ip: IpAddr, proto: &str) -> Self {
        Forwarded {
            ip,
            proto: proto.to_owned(),
        }
    }

    /// The caller context string sent for it.
    pub fn encode(&self) -> String {
        format!("{IP_KEY}:{},{PROTO_KEY}:{}", self.ip, self.proto)
    }

    /// Reads a caller context string; None unless it names both a valid address and a
    /// short lowercase protocol.
    pub fn parse(context: &str) -> Option<Self> {
        let (mut ip, mut proto) = (None, None);
        for field in context.split(',') {
            match field.split_once(':') {
                Some((IP_KEY, v)) => ip = v.parse::<IpAddr>().ok(),
                Some((PROTO_KEY, v))
                    if !v.is_empty()
                        && v.len() <= MAX_PROTO_LEN
                        && v.bytes().all(|b| b.is_ascii_lowercase()) =>
                {
                    proto = Some(v.to_owned())
                }
                _ => {}
            }
        }
        Some(Forwarded {
            ip: ip?,
            proto: proto?,
        })
    }
}

tokio::task_local! {
    static CURRENT: String;
}

/// Runs `fut` with every RPC call it makes (in this task) carrying `caller` as its caller
/// context.
pub async fn scope<F: Future>(caller: &Forwarded, fut: F) -> F::Output {
    CURRENT.scope(caller.encode(), fut).await
}

/// The caller context of the current task, if a [`scope`] set one.
pub(crate) fn current() -> Option<String> {
    CURRENT.try_with(Clone::clone).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_refusals() {
        let f = Forwarded::new("127.0.0.2".parse().unwrap(), "webhdfs");
        assert_eq!(f.encode(), "clientIp:127.0.0.2,clientProto:webhdfs");
        assert_eq!(Forwarded::parse(&f.encode()), Some(f));
        let v6 = Forwarded::new("::1".parse().unwrap(), "webhdfs");
        assert_eq!(Forwarded::parse(&v6.encode()), Some(v6));
        assert_eq!(Forwarded::parse("clientIp:1.2.3.4"), None);
        assert_eq!(Forwarded::parse("clientIp:nope,clientProto:webhdfs"), None);
        assert_eq!(
            Forwarded::parse("clientIp:1.2.3.4,clientProto:web hdfs"),
            None
        );
        assert_eq!(Forwarded::parse("something else"), None);
    }

    #[tokio::test]
    async fn scope_sets_the_current_context() {
        assert_eq!(current(), None);
        let f = Forwarded::new("10.0.0.1".parse().unwrap(), "webhdfs");
        let got = scope(&f, async { current() }).await;
        assert_eq!(
            got.as_deref(),
            Some("clientIp:10.0.0.1,clientProto:webhdfs")
        );
    }
}
