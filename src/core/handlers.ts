/**
 * The contract between Writ and an in-process tool backend: what a handler receives once its
 * grant is verified and consumed, and what it answers (shaped into the layered result).
 */
import type { StoredResource } from "../store/types.ts";

export interface ToolInvocation {
  args: Record<string, unknown>;
  resource: StoredResource | undefined;
}

export interface ToolOutput {
  summary: string;
  structured_content: Record<string, unknown>;
  /** What the tool touched, for the result's provenance. */
  target?: string;
  /** The resource revision after the tool ran, when it changed it. */
  resource_revision?: number;
}

export type InProcessHandler = (invocation: ToolInvocation) => Promise<ToolOutput>;
