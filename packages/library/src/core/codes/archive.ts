import { defineCodes } from "./define.js";

/** Error codes of src/archive. Add a code here, then run `npm run docs:errors`. */
export const archiveCodes = defineCodes([
  {
    code: "archive_package_unreadable",
    httpStatus: 404,
    meaning:
      "The package folder itself does not exist, is not a folder or cannot be read (anything inside agent/ never raises this).",
    remedy: "Check the package path and its permissions.",
  },
  {
    code: "archive_image_mismatch",
    httpStatus: 400,
    meaning:
      "An image passed to save does not hash to the SHA-256 it is filed under, so it cannot be stored under that name.",
    remedy:
      "Key the images map by the lowercase hex SHA-256 of each image's bytes; nothing was written.",
  },
  {
    code: "archive_unsafe_path",
    httpStatus: 409,
    meaning:
      "A save must write in or remove agent/, agent/images/ or agent/conversation.json, but a symbolic link (or another kind of file) is there; verbatim neither follows nor deletes links, and nothing was read, written or deleted through it.",
    remedy: "Remove the link by hand (or move it elsewhere) and save again.",
  },
  {
    code: "archive_write_failed",
    httpStatus: 500,
    meaning:
      "The file system refused a write, rename or removal inside agent/ during a save; the package still holds the previous conversation.",
    remedy: "Read the system error and the path, free space or fix permissions, and save again.",
  },
]);
