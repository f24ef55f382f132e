// The server as a library is these modules together: who imports `TipSyncServer` (the command line,
// the benchmarks, the simulator, tests) gets the device service, the operator service, the storage
// and what the layers share as well.
@_exported import TipSyncDeviceService
@_exported import TipSyncOperatorService
@_exported import TipSyncPostgresStorage
@_exported import TipSyncSQLiteStorage
@_exported import TipSyncServerBasics
@_exported import TipSyncStorage
