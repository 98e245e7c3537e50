import LocafotoErrors

/// Who may offer photos to this node (like AirDrop's modes): `GET` and `PUT /v1/policy`, and the
/// status's `policy`. The inbox keeps it as the setting `policy`.
public enum ReceivePolicy: String, NamedChoice {
    /// Anyone may offer; offers wait in the inbox for a decision, trusted peers' are accepted at once.
    case everyone
    /// Only trusted peers may offer (accepted at once); everyone else is refused.
    case trusted
    /// Every offer is refused.
    case off
}
