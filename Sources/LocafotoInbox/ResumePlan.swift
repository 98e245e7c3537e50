import Foundation
import LocafotoFormats
import LocafotoNode
import LocafotoWire

/// What a receiver already holds of an offer it accepted earlier, sent back in the DECISION so
/// that the sender skips committed items and continues partial ones (protocol/messages.md).
package struct ResumePlan: Sendable, Equatable {
    package var resume: [ResumePoint] = []
    package var completed: [CompletedItem] = []

    package init() {}

    /// Built from the inbox records and the spool: committed items are `completed`; an item
    /// being received resumes at its spooled ciphertext length (the spool file is 64 placeholder
    /// bytes, then ciphertext); anything else (failed, never started, fully spooled without its
    /// end) is sent again from the start.
    package init(offer: String, items: [OfferItemRecord], spool: (String, Int) -> String) throws {
        for item in items {
            switch item.status {
            case .imported:
                completed.append(CompletedItem(item: item.idx, status: .imported, photo: item.photoId))
            case .queued, .needsKey:
                completed.append(CompletedItem(item: item.idx, status: .queued))
            case .receiving where item.startJSON != nil:
                var st = stat()
                guard stat(spool(offer, item.idx), &st) == 0 else { continue }
                let held = Int64(st.st_size) - Int64(LOCAHeader.length)
                if held > 0, held < item.size { resume.append(ResumePoint(item: item.idx, offset: held)) }
            default:
                continue
            }
        }
    }
}
