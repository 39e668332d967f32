from bladec.cli import main

main(prog_name="bladec")
