// The server as a library is these modules together: who imports `TipSyncServer` (the command line,
// the benchmarks, the simulator, tests) gets its storage and what its layers share as well.
@_exported import TipSyncServerBasics
@_exported import TipSyncStorage
