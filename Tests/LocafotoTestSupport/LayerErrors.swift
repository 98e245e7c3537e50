import LocafotoErrors
import Testing

/// The layer's error that `body` throws; nil when it throws nothing. Any other error fails the
/// test (recorded as an issue) and gives nil.
public func thrown<C: LayerErrorCode>(
    _ code: C.Type, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) -> LayerError<C>? {
    do {
        try body()
        return nil
    } catch let e as LayerError<C> {
        return e
    } catch {
        Issue.record(
            "expected a \(LayerError<C>.self), got \(type(of: error)): \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// What `body` did, as the vectors spell it: "ok" when it throws nothing, `name` of the error when
/// it throws an `E`, and for any other error (always a failure: a layer throws only its own) a
/// description that matches no vector.
public func outcome<E: Error>(_ type: E.Type, name: (E) -> String, _ body: () throws -> Void) -> String {
    do {
        try body()
        return "ok"
    } catch let e as E {
        return name(e)
    } catch {
        return "unexpected \(Swift.type(of: error)): \(error)"
    }
}

/// Expects `body` to throw the layer's error `code`, with a message that says something.
public func expectThrows<C: LayerErrorCode, R>(
    _ code: C, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> R
) {
    do {
        _ = try body()
        Issue.record("expected \(LayerError<C>.self) \(code), nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as LayerError<C> {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        #expect(!error.message.isEmpty, sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected \(LayerError<C>.self) \(code), got \(error)", sourceLocation: sourceLocation)
    }
}
