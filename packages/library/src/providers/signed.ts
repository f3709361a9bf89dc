import type { AttachedSignedMaterial, SignedMaterial } from "./types.js";

/** True when a round carried signed material the running turn must keep (A23). */
export function hasSignedMaterial(material: SignedMaterial): boolean {
  return (
    material.leading.length > 0 ||
    material.blockSignatures.length > 0 ||
    material.trailing.length > 0 ||
    material.reasoningDetails.length > 0 ||
    (material.toolCallCallers?.length ?? 0) > 0 ||
    (material.nativeBlocks?.length ?? 0) > 0
  );
}

/**
 * Adds a round's signed material to the running turn's list, attached to the index its
 * assistant message got in the history; returns the list unchanged when there is none.
 */
export function attachSignedMaterial(
  turn: readonly AttachedSignedMaterial[],
  messageIndex: number,
  material: SignedMaterial,
): readonly AttachedSignedMaterial[] {
  return hasSignedMaterial(material) ? [...turn, { messageIndex, material }] : turn;
}
