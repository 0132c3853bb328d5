/**
 * The marker that stands where the middle of an over-long raw record was left out: at index time
 * (`boundedText`, parser version 5 on) and when expand / step cap a record (`capRecordText`).
 * Either keeps the record's true end after it.
 */

/** `\n[… N characters omitted …]\n`. */
export const omissionMarker = (omitted: number): string => `\n[… ${omitted} characters omitted …]\n`

/** Matches an {@link omissionMarker}. */
export const omissionMarkerPattern = /\n\[… \d+ characters omitted …\]\n/
