import Foundation
import LocafotoControl
import LocafotoTestSupport
import Testing

/// The CLI's exit statuses come from one table (`ErrorCode.exitStatus`); the documented table
/// (protocol/control-api.md "Exit statuses") must say the same, row for row.
@Suite("Exit statuses")
struct ExitStatusTests {
    /// status → the agent error codes and the CLI's own code of that row, as documented.
    static func documented() throws -> [Int32: (agent: Set<String>, cli: String?)] {
        let text = try String(contentsOf: Checkout.url("protocol/control-api.md"), encoding: .utf8)
        let section = try #require(text.components(separatedBy: "## Exit statuses of `locafoto`").last)
        var rows: [Int32: (agent: Set<String>, cli: String?)] = [:]
        for line in section.split(separator: "\n") where line.hasPrefix("| ") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            guard cells.count >= 5, let status = Int32(cells[1]) else { continue }
            func codes(_ cell: String) -> [String] {
                cell.split(separator: "`", omittingEmptySubsequences: false).enumerated()
                    .compactMap { $0.offset % 2 == 1 ? String($0.element) : nil }
            }
            rows[status] = (Set(codes(cells[3])), codes(cells[4]).first)
        }
        return rows
    }

    @Test("every code of the documented table has the documented status, and every code is documented")
    func tableMatchesTheDocument() throws {
        let rows = try Self.documented()
        #expect(rows.count == 10, "\(rows.keys.sorted())")
        var documented: Set<String> = []
        for (status, row) in rows {
            for code in row.agent {
                let c = try #require(ErrorCode(rawValue: code), "documented code \(code) is not in ErrorCode")
                #expect(c.exitStatus == status, "\(code)")
                documented.insert(code)
            }
            if let cli = row.cli {
                let c = try #require(ErrorCode(rawValue: cli), "documented CLI code \(cli) is not in ErrorCode")
                #expect(c.exitStatus == status, "\(cli)")
                #expect(ExitStatus.code(for: status).rawValue == cli, "status \(status)")
                documented.insert(cli)
            }
        }
        // Row 1 says "`conflict` and others": the codes with status 1 need not each be named.
        let unnamed = ErrorCode.allCases.filter { !documented.contains($0.rawValue) && $0.exitStatus != 1 }
        #expect(unnamed.isEmpty, "codes missing from the documented table: \(unnamed)")
    }

    @Test("a code this CLI does not know (a newer agent's) is a plain failure")
    func unknownCode() throws {
        func status(_ code: String) throws -> Int32 {
            try JSONDecoder().decode(
                ErrorAnswer.self, from: Data(#"{"error": {"code": "\#(code)", "message": "m"}}"#.utf8)
            )
            .error.code.exitStatus
        }
        #expect(try status("somethingNew") == ExitStatus.failed)
        #expect(try status("vaultLocked") == ExitStatus.tryLater)
    }
}
