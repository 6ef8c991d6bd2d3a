import { isRunledgerError, MAX_DEPTH, parsePath } from "@runledger/core";

console.log(parsePath("notes/2024/todo.md")); // ["notes","2024","todo.md"]
console.log(MAX_DEPTH); // 64
const refused: string[] = [];
for (const path of ["../secret", "/etc/passwd", "a//b", "cafe\u0301.md"]) {
  try {
    parsePath(path);
  } catch (error) {
    if (!isRunledgerError(error, "invalid_path")) throw error;
    refused.push(error.code);
  }
}
console.log(refused.length); // 4 (a ".." segment, absolute, an empty segment, not in NFC)
