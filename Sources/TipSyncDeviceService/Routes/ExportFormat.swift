package import Hummingbird
import NIOCore
import TipSyncServerBasics
import TipSyncStorage

/// How an admin export chooses between JSON and CSV, written once for every export route
/// (experiment participants, tip figures): `?format=csv|json`, else `Accept: text/csv` asks for CSV;
/// any other `format` is `400 invalid_parameter`. The CSV's cells are ``CSVText``'s.
package enum ExportFormat {
    /// Whether the request asks for CSV.
    package static func wantsCSV(_ request: Request) throws -> Bool {
        let format = request.uri.queryParameters["format"].map(String.init)
        if let format, format != "csv", format != "json" {
            throw SyncError.invalidParameter("format: csv or json")
        }
        return format == "csv" || (format == nil && request.headers[.accept]?.contains("text/csv") == true)
    }

    /// A CSV answer, offered as a download named `filename`.
    package static func csv(_ text: String, filename: String) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/csv; charset=utf-8"
        headers[.contentDisposition] = #"attachment; filename="\#(filename)""#
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
