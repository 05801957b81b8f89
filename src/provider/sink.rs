//! The provider side of the event channel: the few ways a provider talks to
//! the host (a canonical stream event, a diagnostic, a batch of translated
//! events), written once instead of once per provider.

use crate::event::{Payload, StreamEvent};

use super::{DiagnosticLevel, EventSink, ProviderEvent};

impl ProviderEvent {
    /// A canonical stream event stamped now.
    pub fn stream(turn_id: &str, session_id: &str, payload: Payload) -> Self {
        ProviderEvent::Stream(StreamEvent::new(turn_id, session_id, payload))
    }

    pub(crate) fn diagnostic(level: DiagnosticLevel, message: impl Into<String>) -> Self {
        ProviderEvent::Diagnostic {
            level,
            message: message.into(),
        }
    }
}

/// What a provider task sends to the host. A closed channel means the host
/// is gone and the task is about to be killed, so sends never fail loudly.
pub(crate) trait Sink {
    fn emit(&self, event: ProviderEvent);

    /// One canonical stream event of `turn_id` in `session_id`.
    fn stream(&self, turn_id: &str, session_id: &str, payload: Payload) {
        self.emit(ProviderEvent::stream(turn_id, session_id, payload));
    }

    fn diagnostic(&self, level: DiagnosticLevel, message: impl Into<String>) {
        self.emit(ProviderEvent::diagnostic(level, message));
    }

    /// Events a translator produced, in order.
    fn forward(&self, events: impl IntoIterator<Item = ProviderEvent>) {
        for event in events {
            self.emit(event);
        }
    }
}

impl Sink for EventSink {
    fn emit(&self, event: ProviderEvent) {
        let _ = self.send(event);
    }
}
