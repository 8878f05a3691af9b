// An app as a user writes it: the package by its name, no bundler configuration.
import { startEngineWorker } from "pi-session-tree/worker";
import { run } from "./run.js";

run(startEngineWorker);
