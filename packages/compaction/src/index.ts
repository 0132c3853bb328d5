/**
 * @baton/compaction — Compaction with a verified handoff and exactly one continuation turn.
 * This step ships the domain core: the job's transition table, idle and user-boundary logic,
 * the headroom guard, metrics, the on-disk journal and the lease lock, and the worker that runs
 * the machine against a live thread through a `ThreadController`.
 */
export {
  activeJobStatuses,
  defaultJobSettings,
  endReasons,
  isTerminalStatus,
  JobRecordSchema,
  JobSettingsSchema,
  jobStatuses,
  newJob,
  terminalJobStatuses,
} from "./job-record.js"
export type {
  ActiveJobStatus,
  ContinuationOutcome,
  EndReason,
  HeadroomProblem,
  JobRecord,
  JobSettings,
  JobStatus,
  NewJobInput,
  ResumeSkipped,
  TerminalJobStatus,
  TokenUsageSample,
} from "./job-record.js"

export { jobEventTags, jobTable, runEvents, timersOf, transition } from "./job-machine.js"
export type {
  Budget,
  JobEffect,
  JobEvent,
  JobEventTag,
  TimerName,
  Transition,
  TransitionLogEntry,
} from "./job-machine.js"

export { assessHeadroom } from "./headroom-guard.js"
export type { HeadroomVerdict } from "./headroom-guard.js"

export {
  awaitStableIdle,
  DEFAULT_IDLE_DEBOUNCE_MS,
  idleBlockers,
  idleEdge,
  idleSampleOf,
  initialStableIdle,
  isIdleSample,
  isStablyIdle,
  observeIdle,
} from "./stable-idle.js"
export type { IdleBlocker, IdleSample, StableIdleTracker } from "./stable-idle.js"

export {
  NO_USER_INPUT_FINGERPRINT,
  threadUserBoundary,
  userBoundary,
  userTurnsOfState,
} from "./user-boundary.js"
export type { UserBoundary, UserTurnView } from "./user-boundary.js"

export { jobMetrics } from "./metrics.js"
export type { JobMetrics } from "./metrics.js"

export {
  checkId,
  EventLogEntrySchema,
  HISTORY_LIMIT,
  HistoryEntrySchema,
  Journal,
  JOURNAL_DIR_MODE,
  JOURNAL_FILE_MODE,
  journalLayer,
  journalPaths,
  jobsDirectory,
  makeJournal,
  relativeJobsDirError,
} from "./journal.js"
export type {
  EventLogEntry,
  HistoryEntry,
  JournalShape,
  ScheduleResult,
  StoredJob,
  ThreadInspection,
} from "./journal.js"

export {
  JournalFileSystem,
  makeMemoryJournalFileSystem,
  memoryJournalFileSystemLayer,
  nodeJournalFileSystem,
  nodeJournalFileSystemLayer,
  refusingJournalFileSystem,
} from "./journal-file-system.js"
export type { JournalFileSystemShape, MemoryFiles } from "./journal-file-system.js"

export {
  acquireJobLock,
  heartbeatJobLock,
  judgeLock,
  nodeProcessProbe,
  nodeProcessProbeLayer,
  parseBootTimeSeconds,
  parseProcStatStartTicks,
  ProcessProbe,
  releaseJobLock,
} from "./job-lock.js"
export type {
  AcquireJobLockOptions,
  JobLock,
  ProcessProbeShape,
  RecoveredLock,
  StaleReason,
} from "./job-lock.js"

export { initialObservation, observationFor, observeThreadState, runWorker } from "./worker.js"
export type { RunWorkerOptions, ThreadObservation, WorkerError } from "./worker.js"

export {
  cancelCompaction,
  compactionStatus,
  JobIds,
  jobView,
  recoverThread,
  scheduleCompaction,
  WorkerLauncher,
} from "./compaction-service.js"
export type {
  CancelRefusal,
  CancelReport,
  CompactionServices,
  CompactionStatus,
  JobIdsShape,
  JobView,
  Recovery,
  ScheduleCompactionInput,
  ScheduleError,
  ScheduleReport,
  WorkerLauncherShape,
  WorkerView,
} from "./compaction-service.js"

export { runCompactionWorker, selectedThreadSource } from "./worker-process.js"
export type {
  OpenedThread,
  RunCompactionWorkerOptions,
  ThreadSource,
  ThreadSourceFailure,
} from "./worker-process.js"

export {
  nodeCompactionLayer,
  nodeJobIds,
  nodeWorkerLauncher,
  workerEntryPath,
  nodeJournalFileSystemLayerFor,
} from "./node-services.js"
export type { NodeCompactionLayerOptions, NodeWorkerLauncherOptions } from "./node-services.js"

export {
  HandoffAlreadyStoredError,
  HandoffJobMismatchError,
  InvalidJobIdError,
  InvalidJobSettingsError,
  JobNotRunnableError,
  WorkerLaunchError,
  JobLockHeldError,
  JobLockLostError,
  JobNotFoundError,
  JournalConflictError,
  JournalCorruptError,
  JournalIoError,
  ScheduleFailedError,
  HandoffNotAttachedError,
  ThreadBusyError,
} from "./errors.js"
export type { JournalError } from "./errors.js"
