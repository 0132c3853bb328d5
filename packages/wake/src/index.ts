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
  CheckpointNotReadyError,
  InvalidJobIdError,
  JobConflictError,
  JobExistsError,
  JobLockHeldError,
  JobNotFoundError,
  WakeFileCorruptError,
  WakeIoError,
} from "./errors.js"
export type { WakeStoreError } from "./errors.js"
export { LOCK_LEASE_MS, withJobLock } from "./job-lock.js"
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
  wakeDirectory,
} from "./job-paths.js"
export type { JobPaths } from "./job-paths.js"
export { JobRecordSchema, defaultJobBounds, jobStates, newJobRecord } from "./job-record.js"
export type {
  JobBounds,
  JobMemory,
  JobRecord,
  JobRun,
  JobSeal,
  JobState,
  NewJobInput,
} from "./job-record.js"
export { JobStore, jobStoreLayer, makeJobStore } from "./job-store.js"
export type {
  CreateJobInput,
  JobStoreShape,
  MemoryStatus,
  Projection,
  StoredJob,
} from "./job-store.js"
export { bandOf, bandSeals, pressureBands, readPressure } from "./pressure.js"
export type { BucketSelector, PressureBand, PressureReading } from "./pressure.js"
export { recoveryPrompt } from "./recovery-prompt.js"
export type { RecoveryPromptInput } from "./recovery-prompt.js"
export {
  WakeFileSystem,
  makeMemoryWakeFileSystem,
  memoryWakeFileSystemLayer,
  nodeWakeFileSystem,
  nodeWakeFileSystemLayer,
} from "./wake-file-system.js"
export type { MemoryWakeFiles, WakeFileSystemShape } from "./wake-file-system.js"
