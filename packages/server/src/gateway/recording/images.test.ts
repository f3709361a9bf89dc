/**
 * Issue 18: how a recorded call's image parts become history blocks (images.ts): base64
 * bytes of a PNG, JPEG, GIF or WebP image are kept under their SHA-256 with the type their first
 * bytes say; anything else is an `imageOmitted` placeholder (the request's bytes stay in the
 * call's row), and a URL is noted, never fetched.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { imageFromBase64, imageFromUrl, imageTypeOf } from "./images.js";

const base64 = (bytes: number[] | string) =>
  Buffer.from(typeof bytes === "string" ? bytes : Uint8Array.from(bytes)).toString("base64");

describe("recorded images", () => {
  it("recognises the four image formats by their first bytes", () => {
    expect(imageTypeOf(Buffer.from("\x89PNG\r\n\x1a\n....", "latin1"))).toBe("image/png");
    expect(imageTypeOf(Uint8Array.from([0xff, 0xd8, 0xff, 0xe0]))).toBe("image/jpeg");
    expect(imageTypeOf(Buffer.from("GIF89a", "latin1"))).toBe("image/gif");
    expect(imageTypeOf(Buffer.from("RIFF\0\0\0\0WEBPVP8 ", "latin1"))).toBe("image/webp");
    expect(imageTypeOf(Buffer.from("RIFF\0\0\0\0WAVE", "latin1"))).toBeUndefined();
    expect(imageTypeOf(new Uint8Array(0))).toBeUndefined();
  });

  it("keeps an image's bytes under their SHA-256 with the type its bytes say (not the declared one)", () => {
    const bytes = Buffer.from("GIF89a-rest", "latin1");
    const kept = imageFromBase64(bytes.toString("base64"), "image/png");
    const sha256 = createHash("sha256").update(bytes).digest("hex");
    expect(kept.block).toEqual({ type: "image", sha256, mimeType: "image/gif" });
    expect(Buffer.from(kept.image?.bytes ?? []).equals(bytes)).toBe(true);
  });

  it("leaves out what is not an image or not base64, with the declared type", () => {
    expect(imageFromBase64(base64("%PDF-1.7"), "image/jpeg")).toEqual({
      block: { type: "imageOmitted", mimeType: "image/jpeg" },
    });
    expect(imageFromBase64("not base64!", "image/webp").block).toEqual({
      type: "imageOmitted",
      mimeType: "image/webp",
    });
    expect(imageFromBase64(42, "not a type").block).toEqual({
      type: "imageOmitted",
      mimeType: "image/png",
    });
  });

  it("reads a data URL's bytes and notes any other URL without fetching it", () => {
    const gif = base64("GIF89a");
    expect(imageFromUrl(`data:image/gif;name=x;base64,${gif}`).block.type).toBe("image");
    expect(imageFromUrl("https://cdn.example/a/photo.JPG?x=1")).toEqual({
      block: { type: "imageOmitted", mimeType: "image/jpeg" },
      url: "https://cdn.example/a/photo.JPG?x=1",
    });
    expect(imageFromUrl("https://cdn.example/render")).toEqual({
      block: { type: "imageOmitted", mimeType: "image/png" },
      url: "https://cdn.example/render",
    });
  });
});
