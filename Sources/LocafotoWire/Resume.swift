import LocafotoFormats

// Resume (cap "resume", protocol/messages.md "Resume"): a DECISION may tell the sender which
// items the receiver already holds in part (`resume`) or in full (`completed`).

extension Decision {
    /// Checks `resume` and `completed` against the offer's item sizes (in offer order), as the
    /// sender must before trusting them: indices unique and in range, 0 < offset < size,
    /// completed items `imported` or `queued`, and no item in both lists.
    public func validate(itemSizes: [Int64]) throws {
        var seen = Set<Int>()
        func claim(_ item: Int, _ list: String) throws {
            guard item >= 0, item < itemSizes.count else {
                throw WireError(
                    .protocolViolation, "DECISION \(list) names item \(item); the offer has \(itemSizes.count)")
            }
            guard seen.insert(item).inserted else {
                throw WireError(.protocolViolation, "DECISION lists item \(item) more than once in resume/completed")
            }
        }
        for r in resume ?? [] {
            try claim(r.item, "resume")
            guard r.offset > 0, r.offset < itemSizes[r.item] else {
                throw WireError(
                    .protocolViolation,
                    "DECISION resumes item \(r.item) at \(r.offset); must be inside 1...\(itemSizes[r.item] - 1)")
            }
        }
        for c in completed ?? [] {
            try claim(c.item, "completed")
            guard c.status == .imported || c.status == .queued else {
                throw WireError(
                    .protocolViolation,
                    "DECISION completes item \(c.item) as \(c.status.rawValue); only imported or queued")
            }
            if let photo = c.photo, !BundleHeader.isCanonicalUUID(photo) {
                throw WireError(
                    .protocolViolation,
                    "DECISION completed item \(c.item) names a photo id that is not a lowercase UUID")
            }
        }
    }
}
