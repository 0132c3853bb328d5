/**
 * @baton/wake — Long tasks that outlive a quota window: checkpoint, memory capsule, pressure
 * bands, the job transition table, the job store and the recovery prompt. The watcher, launcher,
 * CLI and MCP tools build on these.
 */
export {
  CAPSULE_MARKER,
  CAPSULE_MAX_BYTES,
  capsuleFreshness,
  capsulePriority,
  capsuleSectionOrder,
  clipUtf8,
  projectCapsule,
  sha256Hex,
  splitItems,
} from "./capsule.js"
export type { Capsule, CapsuleFreshness, ClippedSection } from "./capsule.js"
export {
  CHECKPOINT_MAX_BYTES,
  CHECKPOINT_TITLE,
  PLACEHOLDER,
  checkpointNotes,
  checkpointProblems,
  checkpointSectionHeadings,
  checkpointSectionKeys,
  checkpointTemplate,
  parseCheckpoint,
  renderCheckpoint,
} from "./checkpoint.js"
export type {
  Checkpoint,
  CheckpointReport,
  CheckpointSectionKey,
  ExtraSection,
} from "./checkpoint.js"
export {
  CheckpointChannel,
  checkpointRequestText,
  makeDaemonCheckpointChannel,
  statusOnlyCheckpointChannel,
  statusOnlyCheckpointChannelLayer,
} from "./checkpoint-channel.js"
export type { CheckpointChannelShape, CheckpointRequestOutcome } from "./checkpoint-channel.js"
export {
  REASONING_EFFORT_RULE,
  execPlan,
  isValidModel,
  isValidReasoningEffort,
  reasoningEfforts,
} from "./continuation-plan.js"
export type { ExecPlan, ExecPlanInput } from "./continuation-plan.js"
export {
  ContinuationProcesses,
  makeFakeContinuationProcesses,
  nodeContinuationProcesses,
  nodeContinuationProcessesLayer,
  parseProcStat,
} from "./continuation-processes.js"
export type {
  ContinuationProcessesShape,
  FakeProcess,
  ProcessExit,
  SpawnSpec,
  SpawnedProcess,
} from "./continuation-processes.js"
export {
  CheckpointNotReadyError,
  InvalidJobIdError,
  InvalidJobSettingError,
  JobConflictError,
  JobExistsError,
  JobLockHeldError,
  JobNotFoundError,
  JobRecordInvalidError,
  JobRefusedError,
  LaunchError,
  NoJobForThreadError,
  WakeFileCorruptError,
  WakeIoError,
  WatcherLockHeldError,
  WatcherLockLostError,
} from "./errors.js"
export type { WakeStoreError } from "./errors.js"
export { classifyCodexError, classifyRun, codexErrorKind } from "./failure-classifier.js"
export type { CodexErrorKind, RunClassification, RunEvidence } from "./failure-classifier.js"
export {
  armJob,
  completeJob,
  createJob,
  jobStatus,
  listJobs,
  OBJECTIVE_MAX_BYTES,
  pauseJob,
  retryWhileBusy,
  stopJob,
  writeJobCheckpoint,
} from "./job-commands.js"
export type { CreateJobRequest, CreatedJob, JobListEntry } from "./job-commands.js"
export { LOCK_LEASE_MS, withJobLock } from "./job-lock.js"
export { findJobForThread, jobBelongsToThread, resolveJobId } from "./job-lookup.js"
export {
  RETRY_BASE_MS,
  RETRY_MAX_MS,
  isTransientFailure,
  jobEventTags,
  parkedStates,
  retryDelayMs,
  runFailures,
  terminalStates,
  transition,
} from "./job-machine.js"
export type {
  JobBound,
  JobEffect,
  JobEvent,
  JobEventTag,
  NotifyKind,
  RunFailure,
  Transition,
} from "./job-machine.js"
export {
  WAKE_DIR_MODE,
  WAKE_FILE_MODE,
  checkJobId,
  isValidJobId,
  jobPaths,
  newJobId,
  relativeWakeDirError,
  wakeDirectory,
} from "./job-paths.js"
export type { JobPaths } from "./job-paths.js"
export {
  JobRecordSchema,
  defaultJobBounds,
  deliveryModes,
  jobStates,
  newJobRecord,
} from "./job-record.js"
export type {
  CheckpointRequest,
  DeliveryMode,
  LastRun,
  JobBounds,
  JobMemory,
  JobRecord,
  JobRun,
  JobSeal,
  JobState,
  NewJobInput,
} from "./job-record.js"
export { deliveryLabel, jobStatusReport } from "./job-status.js"
export type { DeliveryLabel, JobStatusReport } from "./job-status.js"
export { JobStore, jobStoreLayer, makeJobStore } from "./job-store.js"
export type {
  CreateJobInput,
  JobStoreOptions,
  JobStoreShape,
  Leftovers,
  MemoryStatus,
  Projection,
  StoredJob,
} from "./job-store.js"
export { bandOf, bandSeals, pressureBands, readPressure } from "./pressure.js"
export type { BucketSelector, PressureBand, PressureReading } from "./pressure.js"
export {
  discoverRunThread,
  launchContinuation,
  readRunMeta,
  readRunOutcome,
  stopContinuation,
  updateRunMeta,
} from "./launcher.js"
export type { LaunchContext, LaunchResult, RunOutcome } from "./launcher.js"
export {
  QuotaReader,
  allowanceOf,
  codexQuotaReaderLayer,
  makeCodexQuotaReader,
  makeScriptedQuotaReader,
  readingOf,
} from "./quota-reader.js"
export type { QuotaReaderShape, QuotaReading } from "./quota-reader.js"
export { CAPSULE_BEGIN, CAPSULE_END, recoveryPrompt } from "./recovery-prompt.js"
export type { RecoveryPromptInput } from "./recovery-prompt.js"
export { RunMetaSchema, decodeRunMeta, encodeRunMeta, runFiles } from "./run-meta.js"
export {
  SameThreadTurns,
  makeDaemonSameThreadTurns,
  unavailableSameThreadTurns,
  unavailableSameThreadTurnsLayer,
} from "./same-thread-turns.js"
export type { SameThreadStart, SameThreadTurnsShape } from "./same-thread-turns.js"
export type { RunFiles, RunMeta } from "./run-meta.js"
export {
  emptyExecLogScan,
  lastTurnError,
  scanExecLog,
  scanRollout,
  splitCompleteLines,
} from "./run-signals.js"
export type { ExecLogScan, RolloutSignal } from "./run-signals.js"
export {
  ThreadSignals,
  findRolloutFile,
  makeRolloutThreadSignals,
  makeScriptedThreadSignals,
  rolloutThreadSignalsLayer,
} from "./thread-signals.js"
export type { ThreadSignalsShape } from "./thread-signals.js"
export {
  WakeFileSystem,
  makeMemoryWakeFileSystem,
  memoryWakeFileSystemLayer,
  nodeWakeFileSystem,
  nodeWakeFileSystemFor,
  refusingWakeFileSystem,
  nodeWakeFileSystemLayer,
} from "./wake-file-system.js"
export type { MemoryWakeFiles, WakeFileSystemShape } from "./wake-file-system.js"
export { runWatcher } from "./watcher.js"
export type { WatcherError, WatcherEvent, WatcherOptions, WatcherServices } from "./watcher.js"
export { defaultWatcherLimits, jobReadDueAt, quotaReadDueAt } from "./watcher-cadence.js"
export type { CadenceJob, WatcherLimits } from "./watcher-cadence.js"
export {
  WATCHER_LEASE_MS,
  acquireWatcherLock,
  decodeWatcherLock,
  isLockCurrent,
  readLiveWatcherLock,
  readWatcherLock,
  releaseWatcherLock,
  renewWatcherLock,
  watcherLockPath,
} from "./watcher-lock.js"
export type {
  HeldWatcherLock,
  HolderProbe,
  WatcherIdentity,
  WatcherLockInfo,
} from "./watcher-lock.js"
