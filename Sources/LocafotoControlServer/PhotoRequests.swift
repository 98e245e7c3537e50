import LocafotoControl
import LocafotoErrors
import LocafotoNode
import LocafotoQuery

extension PhotoQuery {
    /// `GET /v1/photos`'s parameters as the query; one it refuses is the request's fault.
    package static func requested(by parameters: [String: String]) throws -> PhotoQuery {
        do { return try PhotoQuery(urlParameters: parameters) } catch {
            throw AgentError(.invalidRequest, error.description)
        }
    }
}
