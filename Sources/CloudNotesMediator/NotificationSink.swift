import CloudNotesProtocol

/// Where the mediator sends what the panes must show; the server writes it to the client.
///
/// A sink must deliver notifications in the order it receives them, before the response of the
/// request that caused them.
public protocol NotificationSink: Sendable {
    func send(_ notification: some NotificationType)
}
