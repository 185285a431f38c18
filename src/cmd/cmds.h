/* cmds: the subcommands' entry points, one per file in src/cmd/. */
#ifndef MYRIAD_CMDS_H
#define MYRIAD_CMDS_H

int cmd_walk(int argc, char **argv);
int cmd_fill(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_rm(int argc, char **argv);
int cmd_copy(int argc, char **argv);
int cmd_lifecycle(int argc, char **argv);
int cmd_report(int argc, char **argv);


#endif
