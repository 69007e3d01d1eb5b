//! An rmcp transport over one relayed `lumo:mcp` port: the frames the bridge
//! carries between lumo and the provider are MCP JSON-RPC messages as JSON
//! objects (what `chrome.runtime.Port.postMessage` takes), so rmcp's client
//! runs unchanged over it. The port closing ends the transport, and with it
//! that MCP session; the provider's logical session lives on above it.

use std::borrow::Cow;

use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

use super::link::{Link, Port};

/// Why a frame could not be sent.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum PortError {
    /// The port (or the bridge socket under it) is closed.
    #[error("the provider's port is closed")]
    Closed,
    /// A message lumo made did not serialize (a bug).
    #[error("cannot serialize an MCP message: {0}")]
    Serialize(String),
}

/// One port as an rmcp transport.
pub(crate) struct PortTransport {
    link: Link,
    port: Port,
}

impl PortTransport {
    pub(crate) fn new(link: Link, port: Port) -> Self {
        Self { link, port }
    }
}

impl Transport<RoleClient> for PortTransport {
    type Error = PortError;

    fn name() -> Cow<'static, str> {
        "lumo-provider-port".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let sent = serde_json::to_value(&item)
            .map_err(|e| PortError::Serialize(e.to_string()))
            .and_then(|msg| if self.link.post(self.port.number, msg) { Ok(()) } else { Err(PortError::Closed) });
        std::future::ready(sent)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let frame = self.port.inbound.recv().await?;
            match serde_json::from_value(frame) {
                Ok(message) => return Some(message),
                // A provider's malformed frame is its bug; the session goes on.
                Err(e) => tracing::warn!(error = %e, "provider sent a frame that is not an MCP message"),
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.link.close(self.port.number);
        Ok(())
    }
}
