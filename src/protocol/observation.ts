// Flag combinations of get-app-state and screenshot that make no sense
// together (issue 14), refused INVALID_ARGUMENTS before anything is asked of
// the helper: paging needs a stored snapshot, a diff is of a new observation,
// marks and OCR need the window image, and the marks image is a PNG drawn on
// a PNG.
import { DeckhandError } from "./errors.ts";
import { flagOf } from "./arg-errors.ts";

export interface ObservationArgs {
  noScreenshot?: boolean;
  format?: string;
  snapshotId?: string;
  offset?: number;
  since?: string;
  ocr?: boolean;
  marks?: boolean;
  imageFormat?: string;
  quality?: number;
  region?: string;
  regionCoords?: string;
  maxWidth?: number;
  app?: string;
}

function conflict(a: string, b: string, why: string): DeckhandError {
  return new DeckhandError("INVALID_ARGUMENTS", `${flagOf(a)} and ${flagOf(b)} cannot be used together: ${why}`, { details: { flag: flagOf(a), conflictsWith: flagOf(b) } });
}

/** Throws INVALID_ARGUMENTS for a combination of observation flags that cannot be honoured. */
export function checkObservationArgs(args: ObservationArgs): void {
  if (args.offset !== undefined && args.snapshotId === undefined) {
    throw new DeckhandError("INVALID_ARGUMENTS", "--offset pages a stored snapshot: give its --snapshot-id (the nextOffset came with it)", { details: { flag: "--offset" } });
  }
  if (args.snapshotId !== undefined) {
    // A stored page: nothing is observed, so nothing about a new observation applies.
    for (const f of ["since", "ocr", "marks", "noScreenshot", "imageFormat", "quality", "region", "regionCoords", "maxWidth"] as const) {
      if (args[f] !== undefined && args[f] !== false) throw conflict("snapshotId", f, "--snapshot-id shows a page of a stored snapshot; it observes nothing");
    }
  }
  if (args.noScreenshot === true) {
    for (const f of ["marks", "ocr", "imageFormat", "quality", "region", "regionCoords", "maxWidth"] as const) {
      if (args[f] !== undefined && args[f] !== false) throw conflict("noScreenshot", f, "it needs the window image");
    }
  }
  if (args.marks === true && args.imageFormat !== undefined && args.imageFormat !== "png") {
    throw conflict("marks", "imageFormat", "the set-of-marks image is drawn on a PNG capture (leave --image-format at png)");
  }
  if (args.quality !== undefined && (args.imageFormat === undefined || args.imageFormat === "png")) {
    throw new DeckhandError("INVALID_ARGUMENTS", "--quality applies to --image-format jpeg or webp (PNG is lossless)", { details: { flag: "--quality" } });
  }
  if (args.regionCoords !== undefined && args.region === undefined) {
    throw new DeckhandError("INVALID_ARGUMENTS", "--region-coords says what --region is relative to: give --region too", { details: { flag: "--region-coords" } });
  }
}
