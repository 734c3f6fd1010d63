import CloudNotesProtocol
import CloudNotesStore

// MARK: - Store errors at the protocol boundary

extension ResponseError {
    /// The protocol error a client sees for a store error.
    package static func from(_ error: any Error, presenter: MemoPresenter, baseVersion: Int64? = nil) -> ResponseError {
        switch error {
        case let error as ResponseError:
            return error
        case let error as StoreError:
            switch error {
            case .memoNotFound(let id):
                return MemoID(id).map(ResponseError.memoNotFound) ?? .internalError("bad memo id \(id)")
            case .versionNotFound(let id, let number):
                return MemoID(id).map { .versionNotFound($0, number: number) } ?? .internalError("bad memo id \(id)")
            case .versionConflict(let current):
                return .versionConflict(baseVersion: baseVersion ?? 0, current: presenter.memo(current))
            case .cancelled:
                return .cancelled
            case .writeFailed, .notACloudNotesStore, .newerSchema, .readOnlyNeedsUpgrade, .readOnlyWithUncheckpointedLog:
                return .storeUnavailable(error.description)
            }
        default:
            return .internalError(String(describing: error))
        }
    }
}
